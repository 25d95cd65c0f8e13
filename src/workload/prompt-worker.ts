/**
 * The prompt worker: draws and serializes prompts on its own thread, ahead of need, so that neither the CPU work
 * (about 0.2 µs per id) nor its pauses ever sit between another stream's event and its timestamp on the main
 * thread. It owns the run's prompt generator (Random(seed), drawn in the script's order) and answers credits from
 * the feed (prompt-feed.ts), which bounds how far ahead it may go.
 */
import { batchedAppender } from "./batched-append.ts";
import { promptIdsHash, serializeIds, splitPrompt } from "./prompts.ts";
import { promptDumpLine, SuffixDrawer } from "./prompt-draw.ts";
import type { FromWorker, ToWorker, WirePrompt } from "./prompt-protocol.ts";
import { PyRandom } from "./rng.ts";

declare const self: Worker;

/** Work done before yielding to the worker's own message queue (a close, more credit), ms. */
const SLICE_MS = 8;

interface Pass {
  drawer: SuffixDrawer;
  /** The next prompt index to draw (first, first + step, ...), and the first not yet drawn or skipped. */
  nextIndex: number;
  drawnUpTo: number;
  /** Its position in the pass. */
  next: number;
  /** Positions in the pass. */
  count: number;
  step: number;
  credit: number;
}

let population: Uint32Array = new Uint32Array(0);
let rng: PyRandom | null = null;
/** The generator's state right after the current pct's prefix: every pass starts from a copy of it. */
let afterPrefix: PyRandom | null = null;
let shape = { suffixLen: 0, headLen: 0 };
const passes = new Map<number, Pass>();
let producing = false;

const post = (msg: FromWorker, transfer: ArrayBuffer[] = []): void => self.postMessage(msg, transfer);

self.onmessage = (event: MessageEvent<ToWorker>) => {
  try {
    handle(event.data);
  } catch (err) {
    post({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
};

function handle(msg: ToWorker): void {
  switch (msg.type) {
    case "init":
      population = msg.population;
      rng = new PyRandom(BigInt(msg.seed));
      return;
    case "pct":
      startPct(msg);
      return;
    case "pass":
      if (afterPrefix === null) throw new Error("prompt worker: a pass before any pct");
      passes.set(msg.pass, {
        drawer: new SuffixDrawer(population, afterPrefix.clone(), shape.suffixLen),
        nextIndex: msg.first,
        drawnUpTo: 0,
        next: 0,
        count: msg.positions,
        step: msg.step,
        credit: 0,
      });
      return;
    case "credit": {
      const pass = passes.get(msg.pass);
      if (pass === undefined) return;
      pass.credit += msg.prompts;
      if (!producing) {
        producing = true;
        setTimeout(produce, 0);
      }
      return;
    }
    case "close":
      passes.delete(msg.pass);
      return;
  }
}

function startPct(msg: Extract<ToWorker, { type: "pct" }>): void {
  if (rng === null) throw new Error("prompt worker: a pct before init");
  passes.clear();
  const { prefixLen, suffixLen } = splitPrompt(msg.totalTokens, msg.pct);
  const prefixes: Uint32Array[] = [];
  for (let k = 0; k < msg.workingSet; k++) {
    const prefix = new Uint32Array(prefixLen);
    rng.choicesInto(population, prefix, 0, prefixLen);
    prefixes.push(prefix);
  }
  const prefixDigits = prefixes.map((prefix) => serializeIds(prefix));
  afterPrefix = rng.clone();
  const idsHash = promptIdsHash({ population, prefixes, afterPrefixes: afterPrefix, suffixLen, count: msg.count });
  shape = { suffixLen, headLen: Math.max(0, msg.headLen - prefixLen) };
  // The run's generator moves on as the script's would after drawing every suffix of this pct, whatever the passes do.
  const drawer = new SuffixDrawer(population, rng, suffixLen);
  if (!msg.dump) drawer.skip(msg.count);
  else dump({ pct: msg.pct, prefixLen, suffixLen, prefixDigits, groups: msg.groups }, drawer, msg.count);
  // The prefixes are copied (not transferred): the worker's dump above may have used them, nothing else.
  post({ type: "prefix", pct: msg.pct, prefixLen, suffixLen, prefixes, prefixDigits, idsHash });
}

/** --dump-prompts: the pct's dump lines, posted to the feed in batches (transferred), which hands them to the sink. */
function dump(
  p: { pct: number; prefixLen: number; suffixLen: number; prefixDigits: Uint8Array[]; groups: Int32Array | null },
  drawer: SuffixDrawer,
  count: number,
): void {
  const out = batchedAppender((bytes) => post({ type: "dump", bytes }, [bytes.buffer as ArrayBuffer]));
  for (let i = 0; i < count; i++) {
    const k = p.prefixDigits.length;
    const group = p.groups?.[i] ?? i % k;
    const line = promptDumpLine(p.pct, i, p.prefixLen, p.suffixLen, k, group, p.prefixDigits[group] as Uint8Array, drawer.next(0));
    out.push(line);
  }
  out.flush();
}

/** Draws for every pass with credit, posting each pass's prompts in one message per slice. */
function produce(): void {
  const until = performance.now() + SLICE_MS;
  for (const [id, pass] of passes) {
    const first = pass.next;
    const prompts: WirePrompt[] = [];
    const transfer: ArrayBuffer[] = [];
    while (pass.credit > 0 && pass.next < pass.count && performance.now() < until) {
      // A shard's pass skips the other shards' prompts: drawn past, not made.
      pass.drawer.skip(pass.nextIndex - pass.drawnUpTo);
      const s = pass.drawer.next(shape.headLen);
      pass.drawnUpTo = pass.nextIndex + 1;
      pass.nextIndex += pass.step;
      prompts.push({ chunks: s.chunks, head: s.head, bytes: s.bytes });
      for (const c of s.chunks) transfer.push(c.buffer as ArrayBuffer);
      pass.next++;
      pass.credit--;
    }
    if (prompts.length > 0) post({ type: "prompts", pass: id, first, prompts }, transfer);
  }
  const more = [...passes.values()].some((p) => p.credit > 0 && p.next < p.count);
  if (more) setTimeout(produce, 0);
  else producing = false;
}
