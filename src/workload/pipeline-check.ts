/**
 * A cheap structural check of a tokenizer.json's pipeline against what @huggingface/tokenizers 0.2 implements,
 * so an unusable file is refused at load time, before any request, without building the tokenizer (which is
 * built later, on demand). The type names are those of the library's create_* factories.
 */

const COMPONENT_TYPES: Record<string, { key: string; types: ReadonlySet<string>; nested: string }> = {
  normalizer: {
    key: "normalizer",
    types: new Set(["BertNormalizer", "Precompiled", "Sequence", "Replace", "NFC", "NFD", "NFKC", "NFKD", "Strip", "StripAccents", "Lowercase", "Prepend"]),
    nested: "normalizers",
  },
  pre_tokenizer: {
    key: "pre_tokenizer",
    types: new Set([
      "BertPreTokenizer",
      "Sequence",
      "Whitespace",
      "WhitespaceSplit",
      "Metaspace",
      "ByteLevel",
      "Split",
      "Punctuation",
      "Digits",
      "Replace",
      "FixedLength",
    ]),
    nested: "pretokenizers",
  },
  post_processor: {
    key: "post_processor",
    types: new Set(["TemplateProcessing", "ByteLevel", "BertProcessing", "RobertaProcessing", "Sequence"]),
    nested: "processors",
  },
  decoder: {
    key: "decoder",
    types: new Set(["ByteLevel", "WordPiece", "Metaspace", "BPEDecoder", "CTC", "Sequence", "Replace", "Fuse", "Strip", "ByteFallback"]),
    nested: "decoders",
  },
};

/** Model types the library implements (it silently falls back to a pass-through model for others). */
export const SUPPORTED_MODEL_TYPES = ["BPE", "WordPiece", "Unigram"];

/** The first problem found, as a short phrase, or null when the pipeline looks buildable. */
export function findPipelineProblem(json: Record<string, unknown>): string | null {
  const modelType = (json.model as { type?: unknown } | undefined)?.type;
  if (typeof modelType === "string" && !SUPPORTED_MODEL_TYPES.includes(modelType)) {
    return `model type "${modelType}" is not supported (${SUPPORTED_MODEL_TYPES.join(", ")})`;
  }
  for (const { key, types, nested } of Object.values(COMPONENT_TYPES)) {
    const problem = checkComponent(json[key], key, types, nested);
    if (problem) return problem;
  }
  return null;
}

function checkComponent(value: unknown, key: string, types: ReadonlySet<string>, nested: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "object" || Array.isArray(value)) return `${key} is not an object`;
  const type = (value as { type?: unknown }).type;
  if (typeof type !== "string" || !types.has(type)) return `${key} type ${JSON.stringify(type)} is not supported by @huggingface/tokenizers`;
  const children = (value as Record<string, unknown>)[nested];
  if (type === "Sequence" && Array.isArray(children)) {
    for (const child of children) {
      const problem = checkComponent(child, key, types, nested);
      if (problem) return problem;
    }
  }
  return null;
}
