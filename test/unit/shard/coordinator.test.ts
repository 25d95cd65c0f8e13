/**
 * The coordinator's port on real sockets (unix and TCP): only this run's shards join; strangers, duplicates and
 * broken messages are refused and logged without harm; a shard that dies or hangs fails the job naming it.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Coordinator } from "../../../src/shard/coordinator.ts";
import type { ListenAddress } from "../../../src/shard/coordinator-types.ts";
import { encodeFrame } from "../../../src/shard/frames.ts";
import { PROTOCOL_VERSION, type ShardSetup } from "../../../src/shard/messages.ts";
import { joinCoordinator, type ShardConnection } from "../../../src/shard/shard-client.ts";

const SETUP: ShardSetup = {
  run_id: "r1",
  options_hash: "h",
  model: null,
  page_size: 16,
  text_mode: "cumulative",
  server_version: "0.5",
  backend: "sglang",
  endpoint: "generate",
};
const TOKEN = "0123456789abcdef0123456789abcdef";
const opened: Coordinator[] = [];
afterEach(() => {
  for (const c of opened.splice(0)) c.close();
});

function start(size: number, o: Partial<{ silenceTimeoutMs: number; joinTimeoutMs: number; listen: ListenAddress }> = {}) {
  const notes: string[] = [];
  const c = Coordinator.start({
    listen: o.listen ?? { kind: "tcp", hostname: "127.0.0.1", port: 0 },
    token: TOKEN,
    size,
    setup: SETUP,
    joinTimeoutMs: o.joinTimeoutMs ?? 5000,
    silenceTimeoutMs: o.silenceTimeoutMs ?? 5000,
    note: (m) => notes.push(m),
  });
  opened.push(c);
  const address: ListenAddress = o.listen ?? { kind: "tcp", hostname: "127.0.0.1", port: c.port };
  return { c, notes, address };
}

/** A raw TCP client that writes bytes and reports what came back and whether it was closed. */
async function stranger(port: number, bytes: Uint8Array): Promise<{ received: string; closed: boolean }> {
  let received = "";
  let closed = false;
  const s = await Bun.connect({
    hostname: "127.0.0.1",
    port,
    socket: {
      data(_s, d) {
        received += new TextDecoder().decode(d.slice(4));
      },
      close() {
        closed = true;
      },
    },
  });
  s.write(bytes);
  for (let i = 0; i < 40 && !closed; i++) await Bun.sleep(25);
  s.end();
  return { received, closed };
}

const hello = (rank: number, over: Record<string, unknown> = {}) =>
  encodeFrame({ t: "hello", version: PROTOCOL_VERSION, token: TOKEN, rank, size: 3, pid: 1, host: "h", ...over });

/** A well-behaved shard that answers pings and jobs (with `records` for each job) in the background. */
function serve(conn: ShardConnection, opts: { dieOnJob?: boolean; silentOnJob?: boolean } = {}): void {
  void (async () => {
    for (;;) {
      const m = await conn.next();
      if (m === null || m.t === "stop") return;
      if (m.t === "ping") conn.link.send({ t: "pong", id: m.id, shardEpochMs: performance.timeOrigin + performance.now() });
      if (m.t === "job") {
        if (opts.dieOnJob) return conn.link.destroy();
        if (opts.silentOnJob) continue;
        const health = { loopLagP99Ms: 0, loopLagMaxMs: 0, ownLagP99Ms: 0, jsCpuPct: 1, httpCpuPct: null, processCpuPct: 1 };
        conn.link.send({ t: "records", job: m.job, records: [], health, startEpochMs: 1, endEpochMs: 2, interrupted: false });
      }
    }
  })();
}

describe("the coordinator's port", () => {
  test("the expected shards join (unix socket), clocks are measured, a job gathers each shard's records", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "wb-shard-")), "c.sock");
    const { c, notes, address } = start(3, { listen: { kind: "unix", path } });
    const joined = await Promise.all([1, 2].map((rank) => joinCoordinator(address, { rank, size: 3, token: TOKEN }, 5000)));
    expect(joined.map((j) => j.setup)).toEqual([SETUP, SETUP]);
    for (const j of joined) serve(j);
    await c.waitForShards();
    await c.measureClocks(4);
    for (const s of c.shards) {
      expect(Math.abs(s.clockOffsetMs)).toBeLessThan(5); // one host, one clock
      expect(s.clockRttMs).toBeGreaterThan(0);
    }
    const { results, failures } = await c.runJob({ t: "job", job: 0, pct: 50, working_set: 1, rate_index: 0 });
    expect([...results.keys()].sort()).toEqual([1, 2]);
    expect(failures).toEqual([]);
    expect(notes).toEqual([]);
  });

  test("a released job starts only when every shard is ready, each told the start on its own clock", async () => {
    const { c, address } = start(3);
    const joined = await Promise.all([1, 2].map((rank) => joinCoordinator(address, { rank, size: 3, token: TOKEN }, 5000)));
    const told: Array<{ rank: number; startEpochMs: number }> = [];
    joined.forEach((conn, k) => {
      void (async () => {
        for (;;) {
          const m = await conn.next();
          if (m === null || m.t === "stop") return;
          if (m.t === "ping") conn.link.send({ t: "pong", id: m.id, shardEpochMs: performance.timeOrigin + performance.now() });
          // Shard 2 takes 200 ms to get ready.
          if (m.t === "job") setTimeout(() => conn.link.send({ t: "ready", job: m.job }), k === 1 ? 200 : 0);
          if (m.t === "go") {
            told.push({ rank: k + 1, startEpochMs: m.start_epoch_ms });
            const health = { loopLagP99Ms: 0, loopLagMaxMs: 0, ownLagP99Ms: 0, jsCpuPct: 1, httpCpuPct: null, processCpuPct: 1 };
            conn.link.send({ t: "records", job: m.job, records: [], health, startEpochMs: 1, endEpochMs: 2, interrupted: false });
          }
        }
      })();
    });
    await c.waitForShards();
    await c.measureClocks(4);
    const t0 = performance.now();
    const released = c.releaseJob({ t: "job", job: 0, pct: 0, working_set: 1, rate_index: 0 });
    await released.ready;
    expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
    expect(told).toEqual([]); // nobody starts before "go"
    const startEpochMs = performance.timeOrigin + performance.now() + 20;
    released.start(startEpochMs);
    const { results, failures } = await released.done;
    expect(failures).toEqual([]);
    expect([...results.keys()].sort()).toEqual([1, 2]);
    const offsets = new Map(c.shards.map((s) => [s.rank, s.clockOffsetMs]));
    for (const t of told.sort((a, b) => a.rank - b.rank)) expect(t.startEpochMs).toBe(startEpochMs + offsets.get(t.rank)!);
  });

  test("strangers are refused and logged, and the run goes on: wrong token, duplicate rank, bad rank, malformed, oversized", async () => {
    const { c, notes, address } = start(3);
    const port = (address as { port: number }).port;
    const wrong = await stranger(port, hello(1, { token: "nope" }));
    expect(wrong.closed).toBe(true);
    expect(wrong.received).toContain("wrong token");
    const first = await joinCoordinator(address, { rank: 1, size: 3, token: TOKEN }, 5000);
    serve(first);
    expect((await stranger(port, hello(1))).received).toContain("rank 1 joined already");
    expect((await stranger(port, hello(7))).received).toContain("rank 7 is not in 1..2");
    expect((await stranger(port, hello(2, { size: 9 }))).received).toContain("says 9 shards");
    expect((await stranger(port, encodeFrame({ t: "hello", rank: "two" }))).received).toContain("malformed hello");
    const huge = new Uint8Array(4);
    new DataView(huge.buffer).setUint32(0, 0xfffffff0);
    expect((await stranger(port, huge)).closed).toBe(true);
    expect((await stranger(port, new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"))).closed).toBe(true);
    expect(notes.length).toBe(7);
    expect(notes.every((n) => n.startsWith("refused a shard connection: "))).toBe(true);
    // The real rank 2 still joins, and the job runs.
    const second = await joinCoordinator(address, { rank: 2, size: 3, token: TOKEN }, 5000);
    serve(second);
    await c.waitForShards();
    expect((await c.runJob({ t: "job", job: 0, pct: 0, working_set: 1, rate_index: 0 })).results.size).toBe(2);
  });

  test("a shard with the wrong token is told why", async () => {
    const { address } = start(2);
    await expect(joinCoordinator(address, { rank: 1, size: 2, token: "x".repeat(32) }, 2000)).rejects.toThrow(
      "shard 1: the coordinator refused it: wrong token (rank 1)",
    );
  });

  test("a shard that dies during a job fails it, naming the shard", async () => {
    const { c, address } = start(3);
    const a = await joinCoordinator(address, { rank: 1, size: 3, token: TOKEN }, 5000);
    const b = await joinCoordinator(address, { rank: 2, size: 3, token: TOKEN }, 5000);
    serve(a);
    serve(b, { dieOnJob: true });
    await c.waitForShards();
    const told: string[] = [];
    const { results, failures } = await c.runJob({ t: "job", job: 0, pct: 10, working_set: 1, rate_index: 0 }, (f) => told.push(f.message));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatch(/^shard 2 \(.*, pid \d+\) disconnected$/);
    expect(failures.map((f) => f.rank)).toEqual([2]);
    expect([...results.keys()]).toEqual([1]); // the survivor's records are kept
  });

  test("a shard that hangs (no records, no heartbeat) fails the job within the silence timeout", async () => {
    const { c, address } = start(2, { silenceTimeoutMs: 400 });
    const a = await joinCoordinator(address, { rank: 1, size: 2, token: TOKEN }, 5000);
    serve(a, { silentOnJob: true });
    await c.waitForShards();
    const t0 = performance.now();
    const { failures } = await c.runJob({ t: "job", job: 0, pct: 10, working_set: 1, rate_index: 0 });
    expect(failures[0]?.message).toMatch(/shard 1 .* sent nothing for 0.4 s \(hung\?\)/);
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  test("a shard that never connects fails the wait within the join timeout, naming it", async () => {
    const { c, address } = start(3, { joinTimeoutMs: 300 });
    serve(await joinCoordinator(address, { rank: 1, size: 3, token: TOKEN }, 5000));
    await expect(c.waitForShards()).rejects.toThrow("shard(s) 2 of 3 did not connect within 0.3 s");
  });

  test("a shard with nothing to connect to gives up within its deadline, naming the address", async () => {
    const t0 = performance.now();
    await expect(joinCoordinator({ kind: "tcp", hostname: "127.0.0.1", port: 9 }, { rank: 1, size: 2, token: TOKEN }, 300)).rejects.toThrow(
      "shard 1: cannot reach the coordinator at 127.0.0.1:9 within 0.3 s",
    );
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
