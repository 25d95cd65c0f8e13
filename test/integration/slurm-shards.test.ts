/**
 * `srun ... warmbench --shard auto` on the real local Slurm (test/slurm/start-slurm.sh: two nodes on this machine):
 * one output file, written by shard 0, whose counts equal the mock's, every request accounted for; one node (a
 * unix socket) and two nodes (TCP, with the run's secret); a multi-node step without a secret is refused up front.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startMockServer, type MockServer } from "../../src/mock/server.ts";
import { mockOptions } from "../../src/mock/options.ts";
import { BINARY, LLAMA2_TOKENIZER } from "../helpers/run-cli.ts";
import { readSweepLines } from "../helpers/results.ts";
import { describeSlurm, srun } from "../helpers/slurm.ts";

const dir = mkdtempSync(join(tmpdir(), "warmbench-slurm-shards-"));
const PCTS = [0, 60];
const N = 16;
const OUT_LEN = 5;

describeSlurm(
  "warmbench --shard auto under srun",
  () => {
    let mock: MockServer;
    beforeAll(async () => {
      mock = await startMockServer(mockOptions({ port: 0, pageSize: 16, itlMs: 2, prefillUsPerToken: 1 }));
    });
    afterAll(() => mock.stop());

    const args = (out: string) => [
      BINARY,
      "--model",
      LLAMA2_TOKENIZER,
      "--base-url",
      mock.url,
      "--pcts",
      PCTS.join(","),
      "--num-prompts",
      String(N),
      "--total-tokens",
      "400",
      "--output-len",
      String(OUT_LEN),
      "--max-concurrency",
      "8",
      "--settle",
      "0",
      "--shard",
      "auto",
      "--output-file",
      out,
    ];

    async function check(srunArgs: string[], tag: string, env: Record<string, string> = {}) {
      const out = join(dir, `${tag}.jsonl`);
      const before = mock.stats();
      const r = await srun([...srunArgs, "--kill-on-bad-exit=1", ...args(out)], { env, timeoutMs: 90_000 });
      if (r.code !== 0) console.error(r.stderr);
      expect(r.code).toBe(0);
      const lines = readSweepLines(out);
      expect(lines.map((l) => l.shared_prefix_pct)).toEqual(PCTS);
      const after = mock.stats();
      // Every measured request the mock saw is in the file, and nothing else was measured.
      const measured = lines.reduce((n, l) => n + l.completed + l.failed, 0);
      expect(measured).toBe(N * PCTS.length);
      // The mock's /generate count: a canary, one probe per pct, one warm for pct 60, and the measured requests.
      expect(after.generateRequests - before.generateRequests).toBe(1 + PCTS.length + 1 + measured);
      expect(after.flushes - before.flushes).toBe(PCTS.length);
      for (const l of lines) {
        expect(l.completed).toBe(N);
        expect(l.total_output).toBe(N * OUT_LEN);
        expect(l.cache_check).toBe("ok");
        expect(l.shards.count).toBe(4);
        expect(l.shards.launcher).toBe("slurm");
        expect(l.shards.ranks.map((s: any) => s.sent)).toEqual([4, 4, 4, 4]);
        expect(l.shards.failed).toEqual([]);
      }
      // Only shard 0 prints the report.
      expect(r.stdout.split("Serving Benchmark Result").length - 1).toBe(PCTS.length);
      return lines;
    }

    test("srun -N 1 -n 4: four shards on one node meet over a unix socket", async () => {
      const lines = await check(["-N", "1", "-n", "4"], "one-node");
      expect(new Set(lines[0].shards.ranks.map((s: any) => s.host)).size).toBe(1);
    });

    test("srun -N 2 -n 4 with WARMBENCH_SHARD_TOKEN: shards on two nodes meet over TCP", async () => {
      const lines = await check(["-N", "2", "-n", "4"], "two-nodes", { WARMBENCH_SHARD_TOKEN: "s3cret-token-of-this-run" });
      expect(new Set(lines[0].shards.ranks.map((s: any) => s.host)).size).toBe(2);
    });

    test("srun -N 2 without WARMBENCH_SHARD_TOKEN: every task refuses in one line, exit 2, nothing sent", async () => {
      const before = mock.stats().generateRequests;
      const r = await srun(["-N", "2", "-n", "2", ...args(join(dir, "no-token.jsonl"))], { timeoutMs: 60_000 });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("--shard auto: this Slurm step spans 2 nodes, so the coordinator listens on TCP: set WARMBENCH_SHARD_TOKEN");
      expect(mock.stats().generateRequests).toBe(before);
    });
  },
  { minNodes: 2 },
);
