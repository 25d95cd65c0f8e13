/** --dump-prompts for a replay: every request's token ids with its trace line and hash ids, written before the flush. */
import { batchedAppender } from "../workload/batched-append.ts";
import type { BlockSource } from "./blocks.ts";
import type { TraceRequest } from "./trace.ts";

const encoder = new TextEncoder();

export function dumpPrompts(path: string, requests: readonly TraceRequest[], blocks: BlockSource): void {
  const out = batchedAppender(path);
  for (const r of requests) {
    const head = `{"index":${r.index},"line":${r.line},"timestamp":${r.timestampMs},"input_length":${r.inputLength},"hash_ids":${JSON.stringify(r.hashIds)},"input_ids":[`;
    const parts: Uint8Array[] = [encoder.encode(head)];
    blocks.promptDigits(r).forEach((d, j) => parts.push(...(j > 0 ? [encoder.encode(","), d] : [d])));
    parts.push(encoder.encode("]}\n"));
    out.push(...parts);
  }
  out.flush();
}
