/** `warmbench passport`: each flag against a mock with a small cache (16-token pages, 3000 tokens). */
import { expect } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LLAMA2_TOKENIZER, QWEN3_TOKENIZER } from "../../helpers/run-cli.ts";
import type { Observation } from "../../helpers/flag-proof.ts";
import { fails, FLUSH_DEADLINE, proofBodies, sends, SERVER_FLAGS, verboseEntry, writes, type Entry, type ProofBodies } from "./entries.ts";

const SERVER = ["--page-size", "16", "--cache-tokens", "3000"];
const BASE = ["passport", "--model", LLAMA2_TOKENIZER, "--base-url", "{url}", "--max-tokens", "6000", "--output-file", "{dir}/p.json"];
const passportOf = (o: Observation, file = "p.json") => JSON.parse(readFileSync(join(o.dir, file), "utf8"));
const withServer = (e: Entry): Entry => ({ server: SERVER, ...e });

const PASSPORT: Record<string, Entry> = {
  ...SERVER_FLAGS,
  backend: { args: ["--backend", "openai"], proof: sends },
  model: { args: ["--model", QWEN3_TOKENIZER], proof: sends },
  tokenizer: { args: ["--tokenizer", QWEN3_TOKENIZER], proof: sends },
  "api-key": {
    args: ["--api-key", "sekrit-key"],
    proof: (o, b) => {
      expect(o.requests.every((r) => r.headers.authorization === "Bearer sekrit-key")).toBe(true);
      expect(b.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
    },
  },
  "served-model-name": {
    args: ["--backend", "openai", "--served-model-name", "other-model"],
    vs: ["--backend", "openai"],
    proof: (o) => {
      expect(o.requests.filter((r) => r.path === "/v1/completions").every((r) => JSON.parse(r.body).model === "other-model")).toBe(true);
    },
  },
  seed: { args: ["--seed", "7"], proof: sends },
  "extra-request-body": { args: ["--extra-request-body", '{"max_new_tokens_hint":1}'], proof: sends },
  "output-file": { args: ["--output-file", "{dir}/other.json"], proof: writes("other.json") },
  "flush-deadline": FLUSH_DEADLINE,
  "request-timeout": { args: ["--request-timeout", "0.001"], proof: fails },
  // Every request of more than one output token stalls (the answers check sends one): its own fault counter, so no
  // other test sharing the mock shifts which request stalls.
  "stall-timeout": { args: ["--stall-timeout", "0.3"], server: ["--stall-every", "1", "--stall-s", "3", "--page-size", "16"], vs: [], proof: fails },
  quiet: {
    args: ["--quiet"],
    proof: (o, b) => {
      expect([o.code, b.code]).toEqual([0, 0]);
      expect(b.stderr).toMatch(/ℹ|\[info\]/);
      expect(o.stderr).not.toMatch(/ℹ|\[info\]/);
    },
  },
  verbose: verboseEntry(["--base-url", "http://127.0.0.1:9"]),
  // Below the cache's capacity, the search stops and says the capacity is at least what it filled.
  "max-tokens": {
    args: ["--max-tokens", "2000"],
    proof: (o, b) => {
      expect(passportOf(o).capacity_tokens.uncertainty).toMatch(/a lower bound/);
      expect(passportOf(b).capacity_tokens.value).toBe(2992);
    },
  },
  "idle-wait": {
    args: ["--idle-wait", "0.2"],
    proof: (o, b) => {
      expect(passportOf(o).idle_expiry.value).toBe("none_within_wait");
      expect(passportOf(b).idle_expiry.value).toBeNull();
    },
  },
};

export const PASSPORT_PROOFS: ProofBodies = proofBodies(BASE, Object.fromEntries(Object.entries(PASSPORT).map(([k, e]) => [k, withServer(e)])));
