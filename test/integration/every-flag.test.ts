/**
 * Every flag of every command's `--help` does something in that command: it changes the requests sent (recorded
 * by a proxy in front of a mock process), what a client sees of the mock, the output, the files written or the exit
 * code, compared with the same command line without it. The tables (test/integration/every-flag/) are explicit per
 * command and must list exactly the flags `--help` shows; a flag another branch is wiring is listed under PENDING
 * (the lead moves it into its table on merge), one proven by another test under PROVEN_ELSEWHERE.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { COMMAND_NAMES, type CommandName } from "../../src/config/flags/types.ts";
import { stopMocks } from "../helpers/flag-proof.ts";
import { runCli } from "../helpers/run-cli.ts";
import type { ProofBodies } from "./every-flag/entries.ts";
import { CAPACITY_PROOFS } from "./every-flag/capacity.ts";
import { MEASURING, PROVEN_ELSEWHERE, stopHub } from "./every-flag/measuring.ts";
import { MOCK_PROOFS } from "./every-flag/mock.ts";
import { REPLAY_PROOFS } from "./every-flag/replay.ts";
import { PASSPORT_PROOFS } from "./every-flag/passport.ts";
import { RESULTS_PROOFS } from "./every-flag/results.ts";

afterAll(async () => {
  await stopMocks();
  await stopHub();
});

/**
 * Declared and listed by --help, but not yet proven to do something in this command by this test: each is a
 * test.todo, so the gap shows in every run instead of passing silently. Moving one into its table is the fix.
 */
const UNPROVEN: Partial<Record<CommandName, Record<string, string>>> = {};

/** Wired on another branch; the lead moves each into its table when that branch merges. */
const PENDING: Partial<Record<CommandName, Record<string, string>>> = {};

const TABLES: Record<CommandName, ProofBodies> = {
  ...MEASURING,
  capacity: CAPACITY_PROOFS,
  replay: REPLAY_PROOFS,
  passport: PASSPORT_PROOFS,
  mock: MOCK_PROOFS,
  ...RESULTS_PROOFS,
  // `schema` takes no flag: its table is empty, and --help must show none.
  schema: {},
};

/** The flags `warmbench COMMAND --help` lists (positionals by their upper-case name, lower-cased). */
async function helpFlags(command: CommandName): Promise<string[]> {
  const r = await runCli([command, "--help"]);
  expect(r.code).toBe(0);
  const flags = [...r.stdout.matchAll(/^\s*--([a-z0-9-]+)/gm)].map((m) => m[1]!);
  const args = r.stdout.split("ARGUMENTS")[1]?.split("OPTIONS")[0] ?? "";
  return [...[...args.matchAll(/^\s*([A-Z]+)\b/gm)].map((m) => m[1]!.toLowerCase()), ...flags];
}

for (const command of COMMAND_NAMES) {
  const proofs = TABLES[command];
  describe(`warmbench ${command}: every flag of --help`, () => {
    test("the table lists exactly the flags --help shows", async () => {
      const listed = [proofs, PROVEN_ELSEWHERE[command], UNPROVEN[command], PENDING[command]].flatMap((t) => Object.keys(t ?? {}));
      expect(new Set(listed).size).toBe(listed.length);
      expect([...new Set(listed)].sort()).toEqual((await helpFlags(command)).sort());
    });
    for (const [flag, why] of Object.entries(PENDING[command] ?? {})) test.todo(`--${flag}: pending (${why})`);
    for (const [flag, why] of Object.entries(UNPROVEN[command] ?? {})) test.todo(`--${flag}: unproven (${why})`);
    for (const [flag, body] of Object.entries(proofs)) test(`--${flag} changes what ${command} does`, body);
  });
}
