/**
 * The memory-model scenario's replays (bench/scenarios/memory-model.ts), made in a process of their own:
 * `bun bench/lib/memory-model-replays.ts DIR SPECS_JSON` writes each one's trace into DIR - a Mooncake trace of
 * four-turn conversations under 8 system prompts (test/helpers/mooncake-trace.ts), or a WEKA corpus of agentic
 * sessions - and prints `{name: {path, shape}}`, each shape read from the parsed trace as `warmbench replay` reads it
 * (src/replay/memory-shape.ts). Apart, so that the scenario's process never holds the traces (its children's rusage
 * maxrss would start from them).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ReplayShape } from "../../src/config/memory-model.ts";
import { agenticReplayShape, mooncakeReplayShape } from "../../src/replay/memory-shape.ts";
import { parseTrace } from "../../src/workload/trace.ts";
import { parseWekaTraces } from "../../src/workload/agentic/weka-trace.ts";
import { generateTrace, traceText } from "../../test/helpers/mooncake-trace.ts";
import { seededUniform } from "../../src/metrics/seeded-uniform.ts";

export type ReplaySpec =
  | { kind: "mooncake"; name: string; conversations: number; blockSize: number; systemBlocks: number; maxTurnTokens: number }
  | { kind: "agentic"; name: string; sessions: number; rootTurns: [number, number]; lanes: number };

export interface MadeReplay {
  path: string;
  shape: ReplayShape;
}

/** A small seeded generator, so a corpus is the same in every run. */
const rng = seededUniform;

const AGENTIC_BLOCK = 64;

/**
 * A WEKA corpus (the idea of bench/scenarios/agentic.ts's, smaller): each session a root chain of turns whose prompt
 * grows by appending, and after its second turn a subagent of its own context (a system prompt shared by the
 * session's subagents, then its own blocks) that the root's next turn waits for.
 */
function wekaCorpus(sessions: number, rootTurns: [number, number], seed: number): string {
  const r = rng(seed);
  const int = (lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
  const ids = (base: number, shared: number, input: number) =>
    Array.from({ length: Math.floor(input / AGENTIC_BLOCK) }, (_, j) => (j < shared ? 500_000 + j : base + j));
  const call = (t: number, input: number, hashIds: number[], think: number) => ({
    t: Math.round(t * 1000) / 1000,
    type: "n",
    in: input,
    out: 2,
    hash_ids: hashIds,
    think_time: think,
    api_time: 1,
  });
  const lines: string[] = [];
  for (let s = 0; s < sessions; s++) {
    const steps: object[] = [];
    let input = int(3000, 5000);
    let t = 0;
    for (let i = 0, turns = int(rootTurns[0], rootTurns[1]); i < turns; i++) {
      steps.push(call(t, input, ids(1, 0, input), i === 0 ? 0 : 2));
      t += 1;
      if (i === 1) {
        const inner: object[] = [];
        let sub = int(2500, 6000);
        for (let c = 0; c < 6; c++, sub += int(200, 1500)) inner.push(call(c * 3, sub, ids(1_000_000, 32, sub), c === 0 ? 0 : 2));
        steps.push({ type: "subagent", t: t + 18, agent_id: "agent_001", duration_ms: 18_000, requests: inner });
        t += 18;
      }
      t += 2;
      input += int(60, 400);
    }
    lines.push(JSON.stringify({ id: `synthetic_${s}`, block_size: AGENTIC_BLOCK, hash_id_scope: "local", requests: steps }));
  }
  return `${lines.join("\n")}\n`;
}

function make(dir: string, spec: ReplaySpec): MadeReplay {
  if (spec.kind === "mooncake") {
    const { conversations, blockSize, systemBlocks, maxTurnTokens } = spec;
    const lines = generateTrace({
      conversations,
      blockSize,
      systemBlocks,
      maxTurnTokens,
      systems: 8,
      turns: 4,
      turnGapMs: 30_000,
      startGapMs: 240,
      outputLength: 2,
      seed: 37,
    });
    const path = join(dir, `${spec.name}.jsonl`);
    const text = traceText(lines);
    writeFileSync(path, text);
    return { path, shape: mooncakeReplayShape(parseTrace(path, text, { blockSize, skipInvalid: false, startS: 0, durationS: null, limit: null })) };
  }
  const path = join(dir, `${spec.name}.jsonl`);
  const text = wekaCorpus(spec.sessions, spec.rootTurns, 37);
  writeFileSync(path, text);
  return { path, shape: agenticReplayShape(parseWekaTraces(path, text), spec.lanes) };
}

if (import.meta.main) {
  const [dir, specs] = process.argv.slice(2);
  const made: Record<string, MadeReplay> = {};
  for (const spec of JSON.parse(specs!) as ReplaySpec[]) made[spec.name] = make(dir!, spec);
  process.stdout.write(JSON.stringify(made));
}
