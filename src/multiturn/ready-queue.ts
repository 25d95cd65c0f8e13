/**
 * Clients whose next turn may go, and which of them goes when a slot frees (--ready-queue-policy): `fifo` the one
 * ready longest, `random` one drawn from a seeded stream (bench_multiturn.py's default), `round-robin` client ids in
 * turn - the reuse-distance knob: a client's next turn then waits for every other client's.
 */
import type { ReadyQueuePolicy } from "../config/defaults.ts";
import type { PyRandom } from "../workload/rng.ts";

export class ReadyQueue {
  private readonly clients: number[] = [];
  private readonly policy: ReadyQueuePolicy;
  private readonly numClients: number;
  private readonly rng: PyRandom;
  /** round-robin: the next client id to look for. */
  private cursor = 0;

  constructor(policy: ReadyQueuePolicy, numClients: number, rng: PyRandom) {
    this.policy = policy;
    this.numClients = numClients;
    this.rng = rng;
  }

  get size(): number {
    return this.clients.length;
  }

  push(client: number): void {
    this.clients.push(client);
  }

  /** Removes and returns the next client; undefined when none is ready. */
  pop(): number | undefined {
    if (this.clients.length === 0) return undefined;
    if (this.policy === "fifo") return this.clients.shift();
    if (this.policy === "random") return this.clients.splice(Math.floor(this.rng.random() * this.clients.length), 1)[0];
    let best = 0;
    let bestDistance = Infinity;
    this.clients.forEach((client, at) => {
      const distance = (client - this.cursor + this.numClients) % this.numClients;
      if (distance < bestDistance) {
        bestDistance = distance;
        best = at;
      }
    });
    const client = this.clients.splice(best, 1)[0] as number;
    this.cursor = (client + 1) % this.numClients;
    return client;
  }

  clear(): void {
    this.clients.length = 0;
  }
}
