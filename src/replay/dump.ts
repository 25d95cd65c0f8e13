/** --dump-prompts for a replay: every request's token ids with its trace line and hash ids, written before the flush. */
import { appendFileSync } from "node:fs";
import type { BlockSource } from "./blocks.ts";
import type { TraceRequest } from "./trace.ts";

/** Lines are written in batches of about this many bytes: memory stays bounded however long the trace. */
const BATCH_BYTES = 4 << 20;
const encoder = new TextEncoder();

export function dumpPrompts(path: string, requests: readonly TraceRequest[], blocks: BlockSource): void {
  let batch: Uint8Array[] = [];
  let bytes = 0;
  const flush = () => {
    if (batch.length > 0) appendFileSync(path, Buffer.concat(batch));
    batch = [];
    bytes = 0;
  };
  for (const r of requests) {
    const head = `{"index":${r.index},"line":${r.line},"timestamp":${r.timestampMs},"input_length":${r.inputLength},"hash_ids":${JSON.stringify(r.hashIds)},"input_ids":[`;
    const parts: Uint8Array[] = [encoder.encode(head)];
    blocks.promptDigits(r).forEach((d, j) => parts.push(...(j > 0 ? [encoder.encode(","), d] : [d])));
    parts.push(encoder.encode("]}\n"));
    for (const p of parts) bytes += p.length;
    batch.push(...parts);
    if (bytes >= BATCH_BYTES) flush();
  }
  flush();
}
