/**
 * Progress of a pct's requests on stderr: redrawn in place twice a second on a terminal, one line every
 * 10 s otherwise (CI logs, files). Only counters are touched per request; drawing runs on an unref'd timer.
 */

export interface Progress {
  /** A request ended. */
  settled(ok: boolean): void;
  /** Ends the display (clears the terminal line). */
  stop(): void;
}

export function startProgress(total: number, label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = stream.isTTY === true;
  let done = 0;
  let failed = 0;
  const t0 = performance.now();
  const line = () => {
    const s = ((performance.now() - t0) / 1000).toFixed(0);
    return `${label}: ${done}/${total} requests done${failed ? `, ${failed} failed` : ""} (${s} s)`;
  };
  const timer = setInterval(() => stream.write(tty ? `\r${line()}\u001b[K` : `${line()}\n`), tty ? 500 : 10_000);
  timer.unref();
  return {
    settled(ok: boolean) {
      done++;
      if (!ok) failed++;
    },
    stop() {
      clearInterval(timer);
      if (tty) stream.write("\r\u001b[K");
    },
  };
}
