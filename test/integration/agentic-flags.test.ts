/**
 * Each agentic flag of `warmbench replay` changes what is sent, against the same command line without it: the
 * compiled binary against the mock (a process) on a small WEKA trace this test writes - a root of three calls and one
 * subagent of two, whose recorded think times, end-to-start gaps, wrapper time and duration all differ - so each rule
 * moves one request's intended send by the amount this test works out from the trace (at --time-scale 0.1, against
 * a mock that answers in about a millisecond where the trace recorded api_time). The line records each rule as
 * given. (The every-flag table lists these flags as proven here.)
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockProcess, type MockProcess } from "../helpers/mock-process.ts";
import { readJsonl } from "../helpers/results.ts";
import { LLAMA2_TOKENIZER, runCli } from "../helpers/run-cli.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-agentic-flags-"));
const call = (t: number, ids: number[], o: Record<string, number> = {}) => ({ type: "n", t, in: ids.length * 4, out: 2, hash_ids: ids, api_time: 0.01, ...o });
const TRACE = join(dir, "session.json");
writeFileSync(
  TRACE,
  JSON.stringify({
    id: "s1",
    block_size: 4,
    hash_id_scope: "local",
    // Recorded: r0 at 0; the subagent's result back at 2.5 after 2 s (spawn 0.5), its calls 1 s each; r1 at 2.7
    // (after the subagent's end: the join), think time 0.1; r2 at 3.0.
    requests: [
      call(0, [1, 2]),
      {
        type: "subagent",
        t: 2.5,
        agent_id: "a1",
        duration_ms: 2000,
        requests: [call(0, [50, 51], { api_time: 1 }), call(1.5, [50, 51, 52], { api_time: 1, think_time: 0.5 })],
      },
      call(2.7, [1, 2, 3], { think_time: 0.1 }),
      call(3, [1, 2, 3, 4], { think_time: 0.1 }),
    ],
  }),
);

let mock: MockProcess;
afterAll(async () => {
  await mock?.stop();
});

let n = 0;
async function replay(args: string[]) {
  mock ??= await startMockProcess(["--itl-ms", "0", "--ttft-base-ms", "1"]);
  const k = ++n;
  const out = join(dir, `o-${k}.jsonl`);
  const details = join(dir, `d-${k}.jsonl`);
  const r = await runCli([
    "replay",
    TRACE,
    "--model",
    LLAMA2_TOKENIZER,
    "--base-url",
    mock.url,
    "--settle",
    "0",
    "--time-scale",
    "0.1",
    "--quiet",
    "--output-file",
    out,
    "--request-details",
    details,
    ...args,
  ]);
  const d = readJsonl(details);
  // Each request's intended send, ms after the schedule's origin, by session/chain#turn.
  const at = new Map<string, number>(d.map((x: any) => [`${x.session}/${x.agent_path}#${x.turn}`, x.timestamp_ms]));
  return { ...r, line: readJsonl(out)[0], at };
}

const baselines = new Map<string, Awaited<ReturnType<typeof replay>>>();
const baseline = async (args: string[]) => {
  const key = args.join(" ");
  if (!baselines.has(key)) baselines.set(key, await replay(args));
  return baselines.get(key)!;
};

/**
 * What each flag moves (scaled ms; the mock's answers take about none of the recorded api_time). Base: r0 ends at
 * about 0; the subagent starts 490 ms later in trace time (its spawn 0.5 s after r0's recorded end at 0.01 s), its
 * second call 500 ms after its first's end, so it ends at about 0.99 s; r1 goes 2.69 s after r0's end (end to start),
 * or under think-time at max(0.1 s, the subagent's end + 0.2 s) = 1.19 s.
 */
const MOVES: { flag: string; base: string[]; args: string[]; key: string; shiftMs: number; recorded: (line: any) => void }[] = [
  // r1: 269 ms -> 119 ms (its think time, then the join).
  {
    flag: "delay-rule",
    base: [],
    args: ["--delay-rule", "think-time"],
    key: "0/#1",
    shiftMs: -150,
    recorded: (l) => expect(l.agentic.delay_rule).toBe("think-time"),
  },
  // The subagent: spawned at the wrapper's t (2.5 s), not 0.5 s: 49 ms -> 249 ms.
  {
    flag: "spawn-rule",
    base: [],
    args: ["--spawn-rule", "wrapper-start"],
    key: "0/a1#0",
    shiftMs: 200,
    recorded: (l) => expect(l.agentic.spawn_rule).toBe("wrapper-start"),
  },
  // Under think-time, r1 no longer waits for the subagent: 119 ms -> 10 ms.
  {
    flag: "join-rule",
    base: ["--delay-rule", "think-time"],
    args: ["--delay-rule", "think-time", "--join-rule", "none"],
    key: "0/#1",
    shiftMs: -109,
    recorded: (l) => expect(l.agentic.join_rule).toBe("none"),
  },
  // Every gap capped at 0.3 s: r1 at max(30 ms, the subagent's end 60 ms + 20 ms) instead of 269 ms.
  { flag: "max-idle", base: [], args: ["--max-idle", "0.3"], key: "0/#1", shiftMs: -189, recorded: (l) => expect(l.agentic.max_idle_s).toBe(0.3) },
];

describe("each agentic flag changes what replay sends", () => {
  for (const m of MOVES) {
    test(`--${m.flag}`, async () => {
      const b = await baseline(m.base);
      expect(b.code, b.stderr).toBe(0);
      const r = await replay(m.args);
      expect(r.code, r.stderr).toBe(0);
      expect(r.line.cache_check).toBe("ok");
      m.recorded(r.line);
      const shift = r.at.get(m.key)! - b.at.get(m.key)!;
      // Within 40 ms of the worked-out shift (the mock's answers and the client's timers take a little).
      expect(Math.abs(shift - m.shiftMs)).toBeLessThan(40);
    });
  }

  test("--sessions: two lanes replay the trace twice (a clone)", async () => {
    const b = await baseline([]);
    const r = await replay(["--sessions", "2"]);
    expect(r.code, r.stderr).toBe(0);
    expect([r.line.agentic.lanes, r.line.agentic.sessions]).toEqual([2, 2]);
    expect(r.at.size).toBe(2 * b.at.size);
    expect(r.line.cache_check).toBe("ok");
  });

  test("--start-at: the history before t* is warm-up, off the line; the rest is sent", async () => {
    const b = await baseline([]);
    const r = await replay(["--start-at", "0.5"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.line.agentic.warmup_requests).toBeGreaterThan(0);
    expect(r.at.size).toBeLessThan(b.at.size);
    expect(r.line.cache_check).toBe("ok");
  });

  test("--trace-format: named, the file is read as that format (mooncake refuses a WEKA record, naming its line)", async () => {
    const b = await baseline([]);
    expect(b.line.agentic.trace_format).toBe("weka");
    const r = await replay(["--trace-format", "mooncake", "--block-size", "4"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${TRACE}:1:`);
  });
});
