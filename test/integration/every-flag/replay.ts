/** The every-flag table of `warmbench replay TRACE`: each line replays a generated trace against a mock process. */
import { proofBodies, type Entry, type ProofBodies } from "./entries.ts";

const REPLAY_BASE: string[] = [];
const REPLAY: Record<string, Entry> = {};

export const REPLAY_PROOFS: ProofBodies = proofBodies(REPLAY_BASE, REPLAY);
