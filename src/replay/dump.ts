/** --dump-prompts for a replay: every request's token ids with its trace line and hash ids, handed to the sink before the flush. */
import type { PromptDump } from "../engine/sink.ts";
import { batchedAppender } from "../workload/batched-append.ts";
import type { BlockSource } from "./blocks.ts";
import type { TraceRequest } from "../workload/trace.ts";

const encoder = new TextEncoder();

export function dumpPrompts(requests: readonly TraceRequest[], blocks: BlockSource, sink: PromptDump): void {
  const out = batchedAppender((bytes) => sink.prompts(bytes));
  for (const r of requests) {
    const head = `{"index":${r.index},"line":${r.line},"timestamp":${r.timestampMs},"input_length":${r.inputLength},"hash_ids":${JSON.stringify(r.hashIds)},"input_ids":[`;
    const parts: Uint8Array[] = [encoder.encode(head)];
    for (const [j, d] of blocks.promptDigits(r).entries()) {
      if (j > 0) parts.push(encoder.encode(","));
      parts.push(d);
    }
    parts.push(encoder.encode("]}\n"));
    out.push(...parts);
  }
  out.flush();
}
