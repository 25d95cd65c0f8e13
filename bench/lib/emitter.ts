/**
 * The emitter (bench/emitter/emitter.c): the capacity scenario's load server. Built from source with the
 * system's C compiler into a work directory (never committed as a binary), started per trial like the mock,
 * and asked for its own lateness (write stamp - due time) before it is stopped.
 */
import { join, resolve } from "node:path";
import { startServer, type ServerProcess } from "./procs.ts";
import { spread, type Spread } from "./stats.ts";

/** The emitter's source, relative to the repository root. */
export const EMITTER_SOURCE = "bench/emitter/emitter.c";

/** Compiles the emitter into `outDir` with `cc -O2 -Wall`; returns the binary's path. Throws with cc's output. */
export async function buildEmitter(root: string, outDir: string): Promise<string> {
  // A machine without a C compiler can be given an emitter built elsewhere (same architecture).
  const prebuilt = process.env.WARMBENCH_EMITTER_BIN;
  if (prebuilt) return prebuilt;
  const bin = join(outDir, "emitter");
  const proc = Bun.spawn(["cc", "-O2", "-Wall", "-o", bin, resolve(root, EMITTER_SOURCE)], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`cc ${EMITTER_SOURCE} failed (exit ${code}): ${(out + err).trim().slice(-2000)}`);
  return bin;
}

/** What the emitter itself reports (GET /emitter/stats, snake_case on the wire). */
export interface EmitterStats {
  generateRequests: number;
  completionsRequests: number;
  maxInFlight: number;
  disconnects: number;
  events: number;
  /** Events that did not fit the socket buffer in one send(): stamped when the rest left. */
  partialWrites: number;
  /** Write stamp - due time of every event, ms. */
  lateness: Spread;
  /** The same over the steady window (every stream past its first event, none past its last), ms. */
  steadyLateness: Spread;
  /** --sync only: lateness of the first write of each tick, and the tick's burst length, ms. */
  tickLateness: Spread | null;
  burstMs: Spread | null;
  sendUsMean: number;
  /** Whether it runs SCHED_FIFO (--rt granted). */
  rt: boolean;
}

const NO_SPREAD: Spread = spread([]);

function toSpread(v: unknown): Spread {
  if (v === null || typeof v !== "object") return NO_SPREAD;
  const o = v as Record<string, unknown>;
  const n = (x: unknown): number => (typeof x === "number" ? x : NaN);
  return { count: n(o.count), p50: n(o.p50), p99: n(o.p99), max: n(o.max) };
}

/** Parses the JSON of GET /emitter/stats (also printed on exit after "warmbench emitter stats "). */
export function parseEmitterStats(json: Record<string, unknown>): EmitterStats {
  const n = (key: string): number => (typeof json[key] === "number" ? (json[key] as number) : NaN);
  return {
    generateRequests: n("generate_requests"),
    completionsRequests: n("completions_requests"),
    maxInFlight: n("max_in_flight"),
    disconnects: n("disconnects"),
    events: n("events"),
    partialWrites: n("partial_writes"),
    lateness: toSpread(json.lateness_ms),
    steadyLateness: toSpread(json.steady_lateness_ms),
    tickLateness: "tick_lateness_ms" in json ? toSpread(json.tick_lateness_ms) : null,
    burstMs: "burst_ms" in json ? toSpread(json.burst_ms) : null,
    sendUsMean: n("send_us_mean"),
    rt: json.rt === true,
  };
}

/**
 * Without --sync, no two streams' events are due closer than this (µs): requests that arrive together would
 * otherwise keep their events due together for their whole life, each waiting for the sends before it (one
 * send is ~3-5 µs here), and the load would carry the client's own connection-storm pattern.
 */
export const EMITTER_MIN_GAP_US = 10;

/** How a trial runs the emitter. */
export interface EmitterConfig {
  ttftMs: number;
  itlMs: number;
  /** Every stream's k-th event on one global decode-step grid (synchronized bursts). */
  sync: boolean;
}

/** A running emitter. */
export interface EmitterProcess extends ServerProcess {
  stats(): Promise<EmitterStats>;
}

/**
 * Starts the emitter on an ephemeral port with a truth log. It asks for SCHED_FIFO (--rt): on a shared box a
 * timer wakeup at normal priority can wait milliseconds behind other processes; where that is refused the
 * emitter says so and `stats().rt` is false.
 */
export async function startEmitter(bin: string, truthPath: string, cfg: EmitterConfig): Promise<EmitterProcess> {
  const cmd = [bin, "--host", "127.0.0.1", "--port", "0", "--truth", truthPath, "--ttft-ms", String(cfg.ttftMs), "--itl-ms", String(cfg.itlMs), "--rt"];
  cmd.push(...(cfg.sync ? ["--sync"] : ["--min-gap-us", String(EMITTER_MIN_GAP_US)]));
  const server = await startServer(cmd);
  return {
    ...server,
    stats: async () => parseEmitterStats((await (await fetch(`${server.url}/emitter/stats`)).json()) as Record<string, unknown>),
  };
}
