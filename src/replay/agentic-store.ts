/**
 * How many tokens of drawn blocks an agentic replay keeps: every lane's live context, so a session's history is drawn
 * once, not at every turn - each lane at the corpus's longest prompt, half as much again for the subagents beside it -
 * at least 4M tokens and at most 32M (about 400 MiB at 13 bytes a token). With fewer, 200 sessions of 30k-token
 * contexts outgrew a 4M-token store mid-run and each turn redrew its history on the clock (bench agentic: lag p99
 * 17 ms from that stretch alone). The memory model reads the same figure (memory-shape.ts).
 */
export function agenticStoreTokens(lanes: number, longestPromptTokens: number): number {
  return Math.min(2 ** 25, Math.max(2 ** 22, Math.ceil(lanes * longestPromptTokens * 1.5)));
}
