/**
 * The population random prompts draw from: every token id of a tokenizer.json, sorted ascending.
 * Python's `get_vocab().values()` comes out in HashMap order, different in every process (docs/protocol.md §5),
 * so the sorted id set is the one reproducible choice (and the one SGLang's own tools use).
 */

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

const isTokenId = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 0xffffffff;

/** Ids of `model.vocab`: token->id for BPE/WordPiece/WordLevel, a [piece, score] array (id = index) for Unigram. */
function modelVocabIds(model: unknown): number[] {
  if (!isPlainObject(model)) throw new Error('tokenizer.json has no "model" object');
  const vocab = model.vocab;
  const type = typeof model.type === "string" ? model.type : "unknown";
  if (Array.isArray(vocab)) {
    return vocab.map((entry, index) => {
      if (!Array.isArray(entry) || typeof entry[0] !== "string") {
        throw new Error(`tokenizer.json model (${type}) vocab entry ${index} is not a [piece, score] pair`);
      }
      return index;
    });
  }
  if (isPlainObject(vocab)) {
    const ids: number[] = [];
    // for...in, not Object.entries: no [key, value] array per token on a 150k-token vocabulary.
    for (const token in vocab) {
      const id = vocab[token];
      if (!isTokenId(id)) throw new Error(`tokenizer.json model (${type}) vocab maps ${JSON.stringify(token)} to ${JSON.stringify(id)}, not a token id`);
      ids.push(id);
    }
    return ids;
  }
  throw new Error(`tokenizer.json model (${type}) has no vocab this tool understands (expected a token->id object or a [piece, score] array)`);
}

function addedTokenIds(addedTokens: unknown): number[] {
  if (addedTokens === undefined || addedTokens === null) return [];
  if (!Array.isArray(addedTokens)) throw new Error('tokenizer.json "added_tokens" is not an array');
  return addedTokens.map((token, index) => {
    const id: unknown = isPlainObject(token) ? token.id : undefined;
    if (!isTokenId(id)) throw new Error(`tokenizer.json added_tokens[${index}] has no valid "id"`);
    return id;
  });
}

/** Every token id of a parsed tokenizer.json (model vocab plus added tokens), deduplicated, ascending. */
export function buildPopulation(tokenizerJson: unknown): Uint32Array {
  if (!isPlainObject(tokenizerJson)) throw new Error("tokenizer.json is not a JSON object");
  const base = modelVocabIds(tokenizerJson.model);
  const added = addedTokenIds(tokenizerJson.added_tokens);
  const all = new Uint32Array(base.length + added.length);
  all.set(base, 0);
  all.set(added, base.length);
  all.sort();
  let unique = 0;
  for (let i = 0; i < all.length; i++) {
    // Stryker disable next-line ConditionalExpression: at i = 0, all[-1] is undefined, so the other test holds too.
    if (i === 0 || all[i] !== all[i - 1]) all[unique++] = all[i]!;
  }
  if (unique === 0) throw new Error("tokenizer.json has an empty vocab");
  return all.slice(0, unique);
}
