/**
 * GET /metrics of one server on its own timer while a point runs, off the request path: one scrape at a time (a
 * tick that finds the previous one still out is skipped and counted as missed), each body read up to
 * controlBodyLimit (--control-body-max-mib), each answer handed on with the time it came back. A scrape that fails (refused, timed out,
 * not 200, over the limit) is counted, never thrown: telemetry is evidence beside the run, never a reason to stop it.
 */
import { controlBodyLimit, readCapped, type Control } from "../backends/http.ts";
import { deadlineSignal } from "../interrupt.ts";
import { nowMs } from "./clock.ts";

/** What the scraper counted of its ticks. */
export interface ScrapeCounts {
  ok: number;
  failed: number;
  /** Ticks skipped because the previous scrape was still out. */
  missed: number;
}

/** A scrape's longest wait: a server too busy to answer /metrics in this long is counted as failed. */
const SCRAPE_TIMEOUT_MS = 5_000;

export class TelemetryScraper {
  readonly counts: ScrapeCounts = { ok: 0, failed: 0, missed: 0 };
  private timer: ReturnType<typeof setInterval> | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly ctl: Control,
    /** Each answer's text and the clock's time it arrived (client/clock.ts nowMs). */
    private readonly onBody: (text: string, atMs: number) => void,
  ) {}

  /** Scrapes every `intervalMs` until stop(); 0: never (the before and after scrapes only). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.inFlight !== null) this.counts.missed++;
      else void this.scrapeNow();
    }, intervalMs);
    // A scraper never keeps the process alive on its own.
    this.timer.unref?.();
  }

  /** One scrape now (or the wait for the one already out). */
  scrapeNow(): Promise<void> {
    if (this.inFlight !== null) return this.inFlight;
    this.inFlight = this.scrape().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }

  /** Ends the timer and waits for a scrape still out. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }

  private async scrape(): Promise<void> {
    try {
      const init: RequestInit = { headers: this.ctl.headers, signal: deadlineSignal(this.ctl.signal, SCRAPE_TIMEOUT_MS) };
      if (this.ctl.freshConnections === true) init.keepalive = false;
      const res = await fetch(`${this.ctl.baseUrl}/metrics`, init);
      if (!res.ok) {
        await res.body?.cancel();
        this.counts.failed++;
        return;
      }
      const read = await readCapped(res, controlBodyLimit(this.ctl));
      if (read.over) {
        this.counts.failed++;
        return;
      }
      const at = nowMs();
      this.counts.ok++;
      this.onBody(new TextDecoder().decode(read.bytes), at);
    } catch {
      this.counts.failed++;
    }
  }
}
