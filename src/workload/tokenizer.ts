/**
 * Loads a tokenizer once, before any clock starts: resolves the --tokenizer spec to a tokenizer.json,
 * builds the id population for random prompts, and keeps the tokenizer for counting output tokens.
 */
import { stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { UsageError } from "../errors.ts";
import { isHfRepoId, resolveHubTokenizer, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE, type HubEnv } from "./hf-hub.ts";
import { buildPopulation } from "./vocab.ts";
import { findPipelineProblem } from "./pipeline-check.ts";

/** Where to find a tokenizer: the revision applies to hub repo ids only. */
export interface TokenizerSourceOptions {
  revision: string;
  /** Defaults to process.env (HF_HUB_CACHE, HF_HOME, HF_ENDPOINT, HF_TOKEN, HF_HUB_OFFLINE). */
  env?: HubEnv;
  /** The run's interrupt: stops a download at once. */
  signal?: AbortSignal;
}

/** A tokenizer ready for the run. */
export interface LoadedTokenizer {
  /** The tokenizer.json that was read. */
  path: string;
  /** Every token id, deduplicated, ascending. */
  population: Uint32Array;
  /** Max id + 1. */
  vocabSize: number;
  /** SHA-256 of the tokenizer.json bytes, hex: two runs used the same tokenizer exactly when these agree. */
  sha256: string;
  /** Builds the tokenizer now (it is built on first use otherwise); throws a UsageError if it cannot be. */
  prepare(): void;
  /** Tokens in text without special tokens; "" is 0. */
  countTokens(text: string): number;
  /** The text of these ids, special tokens written out (chat prompts are this text). */
  decode(ids: ArrayLike<number>): string;
  /** The ids of this text, without adding special tokens (the drift check of text prompts). */
  encode(text: string): Uint32Array;
}

const statOrNull = async (path: string) => {
  try {
    return await stat(path);
  } catch {
    return null;
  }
};

/** A tokenizer.json path from a file path, a directory holding tokenizer.json, or a Hugging Face repo id. */
export async function resolveTokenizerFile(spec: string, opts: TokenizerSourceOptions): Promise<string> {
  const info = await statOrNull(spec);
  if (info?.isFile()) return spec;
  if (info?.isDirectory()) {
    const file = join(spec, TOKENIZER_FILE);
    if (!(await statOrNull(file))?.isFile()) throw new UsageError(`tokenizer directory ${spec} has no ${TOKENIZER_FILE}`);
    return file;
  }
  // A name ending in .json is meant as a file, not as a repo to download.
  if (!isHfRepoId(spec) || spec.endsWith(".json")) {
    throw new UsageError(`tokenizer "${spec}" is neither an existing file or directory nor a Hugging Face repo id`);
  }
  return resolveHubTokenizer(spec, opts.revision, opts.env ?? process.env, opts.signal);
}

async function readBytes(path: string, what: string): Promise<Uint8Array> {
  try {
    return await Bun.file(path).bytes();
  } catch (err) {
    throw new UsageError(`cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

function parseJsonBytes(bytes: Uint8Array, path: string, what: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new UsageError(`${what} ${path} is not valid JSON: ${(err as Error).message}`);
  }
}

const readJsonFile = async (path: string, what: string): Promise<unknown> => parseJsonBytes(await readBytes(path, what), path, what);

/** tokenizer_config.json next to the tokenizer.json, or {} (the library then uses its defaults). */
async function readTokenizerConfig(tokenizerPath: string): Promise<object> {
  const configPath = join(dirname(tokenizerPath), TOKENIZER_CONFIG_FILE);
  if (!(await statOrNull(configPath))?.isFile()) return {};
  const config = await readJsonFile(configPath, "tokenizer config");
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new UsageError(`tokenizer config ${configPath} is not a JSON object`);
  }
  return config;
}

/** The library insists on these keys; HF writes them all, as null when unused, but hand-made files may not. */
function withPipelineDefaults(json: Record<string, unknown>): Record<string, unknown> {
  return { normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null, added_tokens: [], ...json };
}

/** Resolves, reads (once) and builds the tokenizer; every problem with the file is a UsageError naming it. */
export async function loadTokenizer(spec: string, opts: TokenizerSourceOptions): Promise<LoadedTokenizer> {
  const path = await resolveTokenizerFile(spec, opts);
  const bytes = await readBytes(path, "tokenizer file");
  // ~10 ms for a 11 MB file, before any clock starts; the bytes are read once either way.
  const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
  const json = parseJsonBytes(bytes, path, "tokenizer file");
  let population: Uint32Array;
  try {
    population = buildPopulation(json);
  } catch (err) {
    throw new UsageError(`tokenizer file ${path}: ${(err as Error).message}`);
  }
  // The library silently falls back to a pass-through model for model types it lacks (miscounting every token)
  // and throws for unknown pipeline parts: refuse both now, before any request is sent.
  const problem = findPipelineProblem(json as Record<string, unknown>);
  if (problem !== null) throw new UsageError(`tokenizer file ${path} cannot be used: ${problem}`);
  const config = await readTokenizerConfig(path);
  // Building the tokenizer takes longer than everything else at start (~0.15-0.4 s for a 150k vocabulary) and
  // only the retokenized output counts need it: build it on demand, so the first request goes out sooner.
  let tokenizer: Tokenizer | null = null;
  const prepare = (): Tokenizer => {
    if (tokenizer !== null) return tokenizer;
    try {
      tokenizer = new Tokenizer(withPipelineDefaults(json as Record<string, unknown>), config);
    } catch (err) {
      throw new UsageError(`tokenizer file ${path} cannot be used: ${(err as Error).message}`);
    }
    return tokenizer;
  };
  return {
    path,
    population,
    vocabSize: population[population.length - 1]! + 1,
    sha256,
    prepare: () => void prepare(),
    countTokens: (text) => (text === "" ? 0 : prepare().encode(text, { add_special_tokens: false }).ids.length),
    decode: (ids) => (ids.length === 0 ? "" : prepare().decode(Array.from(ids), { skip_special_tokens: false })),
    encode: (text) => (text === "" ? new Uint32Array(0) : Uint32Array.from(prepare().encode(text, { add_special_tokens: false }).ids)),
  };
}
