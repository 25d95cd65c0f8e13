/**
 * The engine's send for a source that paces itself (engine/send.ts' SelfPacedSend), without the network: the real
 * dispatcher, each request handed to `start` with its intended time as the engine computes it (a fake server).
 */
import { dispatch } from "../../src/client/dispatcher.ts";
import { intendedOf, type SelfPacedSend, type SourcedRequest } from "../../src/engine/send.ts";
import { startClientMonitor } from "../../src/metrics/self-check.ts";
import type { RequestRecord } from "../../src/schema/record.ts";

export function fakePacedSend(start: (request: SourcedRequest, intendedMs: number) => Promise<RequestRecord>, signal?: AbortSignal): SelfPacedSend {
  return async (source, count, concurrency, onSettled) => {
    const monitor = startClientMonitor();
    const run = dispatch<RequestRecord>({
      count,
      concurrency,
      arrivalsMs: null,
      spinMs: 0,
      isReady: (position) => source.ready(position),
      exhausted: () => source.exhausted?.() === true,
      keepResults: false,
      start: (position, dueMs) => {
        const request = source.take(position);
        return start(request, intendedOf(request, dueMs));
      },
      onSettled,
      signal,
    });
    source.onArrival(() => (source.failure === null ? run.wake() : run.stop()));
    await run.done;
    if (source.failure !== null) throw source.failure;
    return monitor.stop();
  };
}
