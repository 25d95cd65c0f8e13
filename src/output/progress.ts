/**
 * Progress of a pct's requests on stderr, never stdout: on a terminal one line per pct, redrawn in place twice a
 * second and left standing when the pct ends; elsewhere (CI logs, files) a plain line every 10 s; nothing with
 * --quiet. Per request only three counters are touched; drawing runs on an unref'd timer, off the hot path.
 */
import { noProgress, type Progress } from "../engine/sink.ts";

export interface ProgressOptions {
  stream?: Pick<NodeJS.WriteStream, "write" | "isTTY">;
  /** --quiet: draw nothing. */
  quiet?: boolean;
  /** Clock, ms (tests). */
  nowMs?: () => number;
}

/** Redraw period on a terminal, and line period elsewhere, ms. */
const TTY_REDRAW_MS = 500;
const PLAIN_LINE_MS = 10_000;

/** "0:07", "12:34", "1:02:03". */
export function formatClock(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return "--:--";
  const s = Math.round(seconds);
  const hh = Math.floor(s / 3600);
  const mm = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, "0");
  return hh > 0 ? `${hh}:${String(mm).padStart(2, "0")}:${ss}` : `${mm}:${ss}`;
}

/** The progress line: done/total, rates over the elapsed time, elapsed, ETA at the current rate, failures. */
export function progressLine(label: string, s: { done: number; total: number; failed: number; outputTokens: number; elapsedS: number }): string {
  const rate = s.elapsedS > 0 ? s.done / s.elapsedS : 0;
  const tokRate = s.elapsedS > 0 ? s.outputTokens / s.elapsedS : 0;
  const eta = s.done >= s.total ? 0 : rate > 0 ? (s.total - s.done) / rate : NaN;
  return (
    `${label}: ${s.done}/${s.total} requests, ${rate.toFixed(1)} req/s, ${tokRate.toFixed(0)} output tok/s, ` +
    `${formatClock(s.elapsedS)} elapsed, ETA ${formatClock(eta)}, ${s.failed} failed`
  );
}

export function startProgress(total: number, label: string, opts: ProgressOptions = {}): Progress {
  if (opts.quiet) return noProgress(total, label);
  const stream = opts.stream ?? process.stderr;
  const now = opts.nowMs ?? (() => performance.now());
  const tty = stream.isTTY === true;
  let done = 0;
  let failed = 0;
  let outputTokens = 0;
  const t0 = now();
  const line = () => progressLine(label, { done, total, failed, outputTokens, elapsedS: (now() - t0) / 1000 });
  const draw = () => stream.write(tty ? `\r${line()}\u001b[K` : `${line()}\n`);
  const timer = setInterval(draw, tty ? TTY_REDRAW_MS : PLAIN_LINE_MS);
  timer.unref();
  return {
    settled(ok: boolean, tokens: number) {
      done++;
      if (!ok) failed++;
      outputTokens += tokens;
    },
    stop() {
      clearInterval(timer);
      if (tty) stream.write(`\r${line()}\u001b[K\n`);
    },
  };
}
