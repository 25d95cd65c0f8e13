/**
 * Joins warmbench's --request-details with the mock's --truth log on request_id and turns the pair into
 * timestamp errors. Both sides stamp epoch ms as performance.timeOrigin + performance.now(), which agree
 * across processes on one host to a few µs (stack.md §6).
 *
 * For each token-carrying event i the client's receive time is rebuilt from its own record
 * (start + ttft + Σ itl up to that event's tokens) and compared with the mock's write time:
 *   delay_i = client_i - server_i          ("timestamp error" of that event)
 *   TTFT error = client TTFT - (server first event - client start) = delay_first
 *   ITL error  = client gap - server gap = delay_i - delay_{i-1}, spread over the event's tokens like the ITL.
 */

/** One line of `warmbench mock --truth`. */
export interface TruthLine {
  requestId: string | null;
  rid: string;
  receivedMs: number;
  promptTokens: number;
  cachedTokens: number;
  completionTokens: number;
  /** Epoch ms at which each event was written. */
  eventsMs: number[];
  /** Cumulative completion tokens of each event. */
  eventsTokens: number[];
}

/** One line of `warmbench run --request-details`. */
export interface DetailLine {
  requestId: string;
  pct: number;
  index: number;
  ok: boolean;
  failureKind: string | null;
  startEpochMs: number;
  ttftMs: number;
  latencyMs: number;
  outputLen: number;
  cachedTokens: number;
  itlMs: number[];
}

const num = (o: Record<string, unknown>, key: string, where: string): number => {
  const v = o[key];
  if (typeof v !== "number" || !Number.isFinite(v)) throw new Error(`${where}: "${key}" is not a number`);
  return v;
};
const nums = (o: Record<string, unknown>, key: string, where: string): number[] => {
  const v = o[key];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "number")) throw new Error(`${where}: "${key}" is not a number array`);
  return v as number[];
};

/** Parses JSONL text into objects, naming the line of the first bad one; blank lines are skipped. */
export function parseJsonl(text: string, source: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      // A process killed mid-write leaves a partial last line; anything else is a real defect.
      if (i >= lines.length - 2) continue;
      throw new Error(`${source}:${i + 1}: not JSON`);
    }
    if (parsed === null || typeof parsed !== "object") throw new Error(`${source}:${i + 1}: not an object`);
    out.push(parsed as Record<string, unknown>);
  }
  return out;
}

/** Parses the mock's truth log. */
export function parseTruth(text: string, source = "truth"): TruthLine[] {
  return parseJsonl(text, source).map((o, i) => {
    const where = `${source} line ${i + 1}`;
    const eventsMs = nums(o, "events_ms", where);
    const eventsTokens = nums(o, "events_tokens", where);
    if (eventsMs.length !== eventsTokens.length) throw new Error(`${where}: events_ms and events_tokens differ in length`);
    const requestId = o.request_id;
    return {
      requestId: typeof requestId === "string" ? requestId : null,
      rid: String(o.rid ?? ""),
      receivedMs: num(o, "received_ms", where),
      promptTokens: num(o, "prompt_tokens", where),
      cachedTokens: num(o, "cached_tokens", where),
      completionTokens: num(o, "completion_tokens", where),
      eventsMs,
      eventsTokens,
    };
  });
}

/** Parses warmbench's request details. */
export function parseDetails(text: string, source = "details"): DetailLine[] {
  return parseJsonl(text, source).map((o, i) => {
    const where = `${source} line ${i + 1}`;
    if (typeof o.request_id !== "string") throw new Error(`${where}: "request_id" is not a string`);
    return {
      requestId: o.request_id,
      pct: num(o, "pct", where),
      index: num(o, "index", where),
      ok: o.ok === true,
      failureKind: typeof o.failure_kind === "string" ? o.failure_kind : null,
      startEpochMs: num(o, "start_epoch_ms", where),
      ttftMs: num(o, "ttft_ms", where),
      latencyMs: num(o, "latency_ms", where),
      outputLen: num(o, "output_len", where),
      cachedTokens: num(o, "cached_tokens", where),
      itlMs: nums(o, "itl_ms", where),
    };
  });
}

/** What the mock itself did, from the truth alone (also used for the Python script's runs). */
export interface TruthFigures {
  requests: number;
  events: number;
  /** Server-side TTFT: first token event - receipt, ms. */
  serverTtftMs: number[];
  /** Server-side inter-token gaps, each spread over its tokens, ms. */
  serverItlMs: number[];
  /** How late each event was against the mock's schedule (first token + (n-1) * itl), ms. */
  mockLatenessMs: number[];
  /** Events written per second between the first receipt and the last event. */
  eventRatePerS: number;
  /** Lateness of the events written while every stream was between its first and last event, ms. */
  steadyLatenessMs: number[];
  /** Events per second in that steady window; NaN when there is none. */
  steadyEventRatePerS: number;
  firstReceivedMs: number;
  lastEventMs: number;
}

/** Server-side figures of a truth log; `itlMs` is the mock's configured decode gap. */
export function truthFigures(truth: readonly TruthLine[], itlMs: number): TruthFigures {
  const f: TruthFigures = {
    requests: truth.length,
    events: 0,
    serverTtftMs: [],
    serverItlMs: [],
    mockLatenessMs: [],
    eventRatePerS: 0,
    steadyLatenessMs: [],
    steadyEventRatePerS: NaN,
    firstReceivedMs: Infinity,
    lastEventMs: -Infinity,
  };
  for (const t of truth) {
    f.firstReceivedMs = Math.min(f.firstReceivedMs, t.receivedMs);
    const first = t.eventsTokens.findIndex((n) => n >= 1);
    if (first < 0) continue;
    const firstMs = t.eventsMs[first]!;
    f.serverTtftMs.push(firstMs - t.receivedMs);
    let prevMs = firstMs;
    let prevTokens = t.eventsTokens[first]!;
    f.events++;
    for (let i = first + 1; i < t.eventsMs.length; i++) {
      const k = t.eventsTokens[i]! - prevTokens;
      if (k <= 0) continue;
      const ms = t.eventsMs[i]!;
      for (let j = 0; j < k; j++) f.serverItlMs.push((ms - prevMs) / k);
      f.mockLatenessMs.push(ms - (firstMs + (t.eventsTokens[i]! - 1) * itlMs));
      f.events++;
      prevMs = ms;
      prevTokens = t.eventsTokens[i]!;
    }
    f.lastEventMs = Math.max(f.lastEventMs, t.eventsMs[t.eventsMs.length - 1] ?? -Infinity);
  }
  const spanS = (f.lastEventMs - f.firstReceivedMs) / 1000;
  f.eventRatePerS = spanS > 0 ? f.events / spanS : 0;
  addSteadyFigures(truth, itlMs, f);
  return f;
}

/** The steady window: after the last stream's first token event, before the first stream's last event. */
function addSteadyFigures(truth: readonly TruthLine[], itlMs: number, f: TruthFigures): void {
  let fromMs = -Infinity;
  let toMs = Infinity;
  for (const t of truth) {
    const first = t.eventsTokens.findIndex((n) => n >= 1);
    if (first < 0) continue;
    fromMs = Math.max(fromMs, t.eventsMs[first]!);
    toMs = Math.min(toMs, t.eventsMs[t.eventsMs.length - 1]!);
  }
  if (!(toMs > fromMs)) return;
  let events = 0;
  for (const t of truth) {
    const first = t.eventsTokens.findIndex((n) => n >= 1);
    if (first < 0) continue;
    const firstMs = t.eventsMs[first]!;
    for (let i = first + 1; i < t.eventsMs.length; i++) {
      const ms = t.eventsMs[i]!;
      if (ms <= fromMs || ms >= toMs) continue;
      events++;
      f.steadyLatenessMs.push(ms - (firstMs + (t.eventsTokens[i]! - 1) * itlMs));
    }
  }
  f.steadyEventRatePerS = events / ((toMs - fromMs) / 1000);
}

/** Client-vs-truth errors of one warmbench run. */
export interface JoinResult {
  details: number;
  ok: number;
  /** ok details whose request_id has a truth line. */
  joined: number;
  /** ok details with no truth line (or a truth line with no token event). */
  unmatched: number;
  /** Joined requests whose token counts disagree (client saw fewer/more ITL samples than the truth implies). */
  mismatched: number;
  /** Client TTFT minus true TTFT (= receive delay of the first token event), ms. */
  ttftErrorMs: number[];
  /** Client ITL minus true ITL, per ITL sample, ms. */
  itlErrorMs: number[];
  /** Client receive time minus server write time of every token event, ms. */
  eventDelayMs: number[];
  /** The server's write time of each eventDelayMs entry, epoch ms. */
  eventWrittenMs: number[];
  /** Server receipt minus client send stamp, ms (connect + request transfer + server read). */
  sendDelayMs: number[];
  /**
   * Event delays of the steady state only: events the mock wrote while every joined stream was past its first
   * event and none had sent its last (no connection storm, no end-of-stream work), ms.
   */
  steadyDelayMs: number[];
}

/** Joins details with truth on request_id; failed client requests are left out. */
export function joinDetails(details: readonly DetailLine[], truth: readonly TruthLine[]): JoinResult {
  const byId = new Map<string, TruthLine>();
  for (const t of truth) if (t.requestId !== null) byId.set(t.requestId, t);
  const r: JoinResult = {
    details: details.length,
    ok: 0,
    joined: 0,
    unmatched: 0,
    mismatched: 0,
    ttftErrorMs: [],
    itlErrorMs: [],
    eventDelayMs: [],
    eventWrittenMs: [],
    sendDelayMs: [],
    steadyDelayMs: [],
  };
  const writtenMs = r.eventWrittenMs;
  let steadyFromMs = -Infinity;
  let steadyToMs = Infinity;
  for (const d of details) {
    if (!d.ok) continue;
    r.ok++;
    const t = byId.get(d.requestId);
    const first = t ? t.eventsTokens.findIndex((n) => n >= 1) : -1;
    if (!t || first < 0) {
      r.unmatched++;
      continue;
    }
    r.joined++;
    r.sendDelayMs.push(t.receivedMs - d.startEpochMs);
    if (!joinOne(d, t, first, r, writtenMs)) {
      r.mismatched++;
      continue;
    }
    steadyFromMs = Math.max(steadyFromMs, t.eventsMs[first]!);
    steadyToMs = Math.min(steadyToMs, t.eventsMs[t.eventsMs.length - 1]!);
  }
  for (let i = 0; i < writtenMs.length; i++) {
    if (writtenMs[i]! > steadyFromMs && writtenMs[i]! < steadyToMs) r.steadyDelayMs.push(r.eventDelayMs[i]!);
  }
  return r;
}

/** Adds one request's errors to `r`; false (adding nothing) when its token accounting disagrees with the truth. */
function joinOne(d: DetailLine, t: TruthLine, first: number, r: JoinResult, writtenMs: number[]): boolean {
  const delays: number[] = [];
  const written: number[] = [t.eventsMs[first]!];
  const itlErrors: number[] = [];
  let clientMs = d.startEpochMs + d.ttftMs;
  let prevDelayMs = clientMs - t.eventsMs[first]!;
  delays.push(prevDelayMs);
  let used = 0; // ITL samples consumed so far
  let prevTokens = t.eventsTokens[first]!;
  for (let i = first + 1; i < t.eventsMs.length; i++) {
    const k = t.eventsTokens[i]! - prevTokens;
    if (k <= 0) continue;
    if (used + k > d.itlMs.length) return false;
    for (let j = 0; j < k; j++) clientMs += d.itlMs[used + j]!;
    used += k;
    prevTokens = t.eventsTokens[i]!;
    const delayMs = clientMs - t.eventsMs[i]!;
    delays.push(delayMs);
    written.push(t.eventsMs[i]!);
    for (let j = 0; j < k; j++) itlErrors.push((delayMs - prevDelayMs) / k);
    prevDelayMs = delayMs;
  }
  if (used !== d.itlMs.length) return false;
  r.ttftErrorMs.push(delays[0]!);
  for (const x of delays) r.eventDelayMs.push(x);
  for (const x of written) writtenMs.push(x);
  for (const x of itlErrors) r.itlErrorMs.push(x);
  return true;
}
