/**
 * A flag is one declaration bound to its field (issue 26): the options every measuring command shares are filled by
 * their declarations' parsers, and the shards' workload hash is made of the fields the declarations mark as shaping
 * the workload - no list of either kept by hand elsewhere.
 */
import { describe, expect, test } from "bun:test";
import { CLIENT_FLAGS } from "../../../../src/config/flags/index.ts";
import { commandBinding, parseBound, workloadFields } from "../../../../src/config/flags/bound.ts";
import { conversationHash } from "../../../../src/multiturn/shards.ts";
import { parseMultiturnOptions } from "../../../../src/cli/multiturn-options.ts";
import { parseRunOptions } from "../../../../src/cli/options.ts";
import { parseReplayOptions } from "../../../../src/cli/replay-options.ts";
import { parseCapacityOptions } from "../../../../src/cli/capacity-options.ts";
import { parsePassportOptions } from "../../../../src/cli/passport-options.ts";
import { workloadHash, WORKLOAD_FIELDS } from "../../../../src/sweep/shard-worker.ts";
import { LLAMA2_TOKENIZER } from "../../../helpers/run-cli.ts";
import { checkCrossFlagRules, flagsOf } from "../../../../src/cli/flags.ts";
import { COMMAND_NAMES } from "../../../../src/config/flags/types.ts";

const BASE = { model: LLAMA2_TOKENIZER, "base-url": "http://127.0.0.1:9" };

describe("flags bound to their fields", () => {
  test("each field a command's options hold from the declarations is filled by exactly one of them, which carries its parser", () => {
    for (const command of COMMAND_NAMES) {
      const fields = CLIENT_FLAGS.flatMap((d) => {
        const bind = commandBinding(d, command)?.bind ?? (d.fixed?.[command] !== undefined ? d.bind : undefined);
        return bind !== undefined && (bind.parse !== undefined || bind.value !== undefined) ? [bind.field] : [];
      });
      expect([command, fields.filter((f, i) => fields.indexOf(f) !== i)]).toEqual([command, []]);
      // A command that takes a flag has no field fixed by it too.
      for (const d of CLIENT_FLAGS) if (d.fixed?.[command] !== undefined) expect([command, d.name, d.commands[command]]).toEqual([command, d.name, undefined]);
    }
  });

  test("every command's parser hands on every field the generic parser fills: a new bound flag needs no parser edit", () => {
    const keys = (o: object) => Object.keys(o);
    const missing = (bound: object, opts: object) => keys(bound).filter((f) => !(f in opts));
    expect(missing(parseBound("run", {}, {}), parseRunOptions(BASE, {}))).toEqual([]);
    expect(missing(parseBound("demo", {}, {}), parseRunOptions(BASE, {}, "demo"))).toEqual([]);
    expect(missing(parseBound("multiturn", {}, {}), parseMultiturnOptions(BASE, {}))).toEqual([]);
    expect(missing(parseBound("passport", {}, {}), parsePassportOptions(BASE, {}))).toEqual([]);
    const replay = parseReplayOptions({ ...BASE, trace: "t.jsonl" }, {});
    // The trace's flags fill the trace's options (--num-prompts: its limit).
    expect(missing(parseBound("replay", {}, {}), { ...replay, ...replay.trace, numPrompts: replay.trace.limit })).toEqual([]);
    const capacity = parseCapacityOptions({ ...BASE, gate: "failed==0" }, {});
    expect(missing(parseBound("capacity", {}, {}), { ...capacity.run, ...capacity })).toEqual([]);
  });

  test("a field a command takes no flag for is fixed by the declaration: as if given, or as if absent", () => {
    // The demo's options are run's: --flush-deadline is refused there, its field run's default.
    expect(parseBound("demo", {}, { OPENAI_API_KEY: "k" })).toMatchObject({
      flushDeadlineS: 60,
      pageSize: null,
      servedModelName: null,
      apiKey: "k",
      revision: "main",
    });
    expect(parseBound("multiturn", {}, {})).toMatchObject({ endpoint: "auto" });
    expect(parseBound("replay", {}, {})).toMatchObject({ endpoint: "auto", strict: false });
    // Fixed: a flag the command does not take cannot change it.
    expect(parseBound("passport", { flush: "none", "verify-cache": "off", "page-size": "4" }, {})).toMatchObject({
      endpoint: "auto",
      flush: "auto",
      verifyCache: "warn",
      pageSize: null,
    });
    // Not in the workload hash: every process has the same.
    expect(workloadFields("multiturn")).not.toContain("endpoint");
  });

  test("one generic parser fills every bound field of a command: its declared default, its choices, its command's own binding", () => {
    const run = parseBound("run", {}, {});
    expect(run).toMatchObject({
      numPrompts: 64,
      totalTokens: 70000,
      outputLen: 200,
      maxConcurrency: 4,
      pcts: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 92, 95, 97, 99],
    });
    // The command's declared default, not another command's.
    const multiturn = parseBound("multiturn", {}, {});
    expect(multiturn).toMatchObject({ outputLen: 64, maxConcurrency: 128, workingSet: 1, numClients: 256, numRounds: 5, readyQueuePolicy: "random" });
    expect("workingSets" in multiturn).toBe(false);
    // A command's own binding: another message for the same flag.
    expect(() => parseBound("run", { "max-concurrency": "-1" }, {})).toThrow(
      "--max-concurrency -1: a concurrency limit cannot be negative (0 means unlimited, as in the script)",
    );
    expect(() => parseBound("multiturn", { "max-concurrency": "-1" }, {})).toThrow("(0 means every client at once)");
    // Declared choices, checked once for every flag that has them.
    expect(() => parseBound("run", { backend: "tgi" }, {})).toThrow('--backend: "tgi" is not supported (choose from: auto, sglang, vllm, llamacpp, openai)');
    expect(() => parseBound("multiturn", { "ready-queue-policy": "lifo" }, {})).toThrow("--ready-queue-policy");
    // A flag the command does not take fills nothing.
    expect("numClients" in run).toBe(false);
  });

  test("capacity, replay and passport fill their own fields from the same parser; a flag neither given nor defaulted is null", () => {
    expect(parseBound("capacity", {}, {})).toMatchObject({ search: "rate", probeRequests: 200, probeDurationS: null, precision: 0.05, confirm: 2 });
    expect(parseBound("capacity", { "num-prompts": "7", duration: "2.5", search: "concurrency" }, {})).toMatchObject({
      probeRequests: 7,
      probeDurationS: 2.5,
      search: "concurrency",
    });
    expect(() => parseBound("capacity", { search: "latency" }, {})).toThrow('--search: "latency" is not supported');
    expect(() => parseBound("capacity", { confirm: "11" }, {})).toThrow("--confirm: must be <= 10, got 11");
    expect(parseBound("replay", {}, {})).toMatchObject({ timeScale: 1, windowS: 60, cacheTokens: null, ignoreTimestamps: false, maxConcurrency: 0 });
    expect(() => parseBound("replay", { "time-scale": "0" }, {})).toThrow("--time-scale 0: must be > 0");
    expect(() => parseBound("replay", { "cache-tokens": "0" }, {})).toThrow("--cache-tokens: must be >= 1, got 0");
    expect(parseBound("passport", {}, {})).toMatchObject({ maxTokens: 2_000_000, idleWaitS: 0, backend: "auto" });
  });

  test("multiturn's shards agree on the declarations' shaping fields: a conversation flag changes the hash, an output path does not", () => {
    const fields = workloadFields("multiturn");
    for (const f of ["numClients", "numRounds", "turnTokens", "sharedSystemTokens", "thinkTime", "readyQueuePolicy", "roundBarrier", "workingSet", "seed"])
      expect([f, fields.includes(f)]).toEqual([f, true]);
    expect(fields).not.toContain("outputFile");
    const BASE_MT = { model: LLAMA2_TOKENIZER, "base-url": "http://127.0.0.1:9" };
    const hash = conversationHash(parseMultiturnOptions(BASE_MT, {}));
    expect(conversationHash(parseMultiturnOptions({ ...BASE_MT, "output-file": "x.jsonl", quiet: true }, {}))).toBe(hash);
    for (const [flag, value] of [
      ["num-clients", "3"],
      ["think-time", "0.5"],
      ["round-barrier", true],
      ["first-turn-tokens", "9"],
      ["request-details", "d.jsonl"],
    ] as const) {
      expect([flag, conversationHash(parseMultiturnOptions({ ...BASE_MT, [flag]: value }, {})) === hash]).toEqual([flag, false]);
    }
  });

  test("a flag left out takes its declaration's default; given, its parser's value", () => {
    const none: Record<string, unknown> = parseBound("run", {}, {});
    expect(none).toMatchObject({
      seed: 42n,
      settleMs: 1000,
      requestTimeoutS: 3600,
      stallTimeoutS: 300,
      verifyCache: "warn",
      flush: "auto",
      quiet: false,
      pageSize: null,
      apiKey: null,
    });
    for (const decl of CLIENT_FLAGS) {
      const view = commandBinding(decl, "run");
      if (view?.bind === undefined || typeof view.spec.default !== "number" || !(view.bind.field in none)) continue;
      const value = none[view.bind.field];
      // Seconds shown, milliseconds kept (settle); MiB shown, bytes kept (the *-mib limits): the shown default is the value in the flag's unit.
      const shown = decl.name === "settle" ? Number(value) / 1000 : decl.name.endsWith("-mib") ? Number(value) / 2 ** 20 : Number(value);
      expect([decl.name, shown]).toEqual([decl.name, view.spec.default]);
    }
    const given = parseBound("run", { seed: "7", settle: "0.5", "page-size": "16", quiet: true, "api-key": "k" }, {});
    expect(given).toMatchObject({ seed: 7n, settleMs: 500, pageSize: 16, quiet: true, apiKey: "k" });
    expect(parseBound("run", {}, { OPENAI_API_KEY: "from-env" }).apiKey).toBe("from-env");
    expect(() => parseBound("run", { "request-timeout": "0" }, {})).toThrow(/--request-timeout/);
  });

  test("the workload hash is made of the declarations' shaping fields: a shaping flag changes it, an output flag does not", () => {
    const opts = parseRunOptions(BASE, {});
    for (const field of WORKLOAD_FIELDS) expect([field, field in opts]).toEqual([field, true]);
    const hash = workloadHash(opts);
    expect(workloadHash(parseRunOptions({ ...BASE, quiet: true, "output-file": "x.jsonl" }, {}))).toBe(hash);
    for (const [flag, value] of [
      ["seed", "7"],
      ["num-prompts", "9"],
      ["request-rate", "5"],
      ["stall-timeout", "9"],
      ["extra-request-body", '{"a":1}'],
    ] as const) {
      expect([flag, workloadHash(parseRunOptions({ ...BASE, [flag]: value }, {})) === hash]).toEqual([flag, false]);
    }
  });
});

describe("declared cross-flag rules", () => {
  test("a flag given without the flag it requires, or with one it conflicts with, is one usage error naming both", () => {
    const flags = [
      { name: "a", type: "string" as const, help: "", requires: "b" },
      { name: "b", type: "boolean" as const, help: "" },
      { name: "c", type: "boolean" as const, help: "", conflicts: { b: "they do the same" } },
    ];
    expect(() => checkCrossFlagRules(flags, ["--a", "1"])).toThrow("--a: only --b reads it (add --b)");
    expect(() => checkCrossFlagRules(flags, ["--a=1", "--b"])).not.toThrow();
    expect(() => checkCrossFlagRules(flags, ["--c", "--b"])).toThrow("--c: not with --b: they do the same");
    expect(() => checkCrossFlagRules(flags, ["--c"])).not.toThrow();
  });

  test("every rule names a flag its command takes", () => {
    for (const command of COMMAND_NAMES) {
      const flags = flagsOf(command);
      const names = new Set(flags.map((f) => f.name));
      for (const f of flags) {
        for (const other of [...(f.requires === undefined ? [] : [f.requires]), ...Object.keys(f.conflicts ?? {})]) {
          expect([command, f.name, names.has(other)]).toEqual([command, f.name, true]);
        }
      }
    }
  });
});
