/**
 * The local Slurm that test/slurm/start-slurm.sh runs on this machine: munged, slurmctld and one slurmd per node
 * (two nodes, wbnode1 and wbnode2, by default; SLURM_CI_NODES=1 gives the single node "localhost"), all on 127.0.0.1.
 *
 * Skip policy: outside CI a missing or stopped Slurm skips the Slurm tests, with one message on stderr that says
 * how to start it; with CI=true (as npm test sets it) the same situation is a failing test, because npm test starts Slurm itself and a
 * silent skip there would hide a broken setup.
 */
import { describe, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./run-cli.ts";

export const START_SLURM = join(ROOT, "test", "slurm", "start-slurm.sh");
/** Where start-slurm.sh keeps its config; the script reads the same variable with the same default. */
const SLURM_DIR = process.env.SLURM_CI_DIR ?? "/tmp/slurm-ci";
const SLURM_CONF = join(SLURM_DIR, "slurm.conf");
const HOW_TO_START = `start it (as root) with: bash ${join("test", "slurm", "start-slurm.sh")} start (2 nodes unless SLURM_CI_NODES says otherwise)`;
const DEFAULT_TIMEOUT_MS = 30_000;
/** srun ignores SIGTERM while it cannot reach slurmctld, so a timed-out command gets SIGKILL after this. */
const KILL_GRACE_MS = 5_000;

export interface SlurmResult {
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  elapsedMs: number;
}

export interface SlurmRunOptions {
  /** Added to the environment srun (or sbatch, ...) starts with; srun passes it on to every task. */
  env?: Record<string, string>;
  timeoutMs?: number;
  cwd?: string;
}

function isCi(): boolean {
  return process.env.CI === "true" || process.env.CI === "1";
}

/**
 * The environment for Slurm commands: the caller's, minus every SLURM_/SRUN_/SBATCH_/SALLOC_ input variable (when
 * the tests themselves run inside an allocation, an inherited SLURM_NTASKS or SLURM_JOB_ID would change what srun
 * does), pointed at this project's cluster, plus `extra`.
 */
function slurmEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || /^(SLURM|SRUN|SBATCH|SALLOC)_/.test(key)) continue;
    env[key] = value;
  }
  return { ...env, NO_COLOR: "1", SLURM_CONF, ...extra };
}

type Availability = { available: true; nodes: string[] } | { available: false; reason: string };
let availability: Availability | undefined;

/** Why Slurm cannot be used here, or null when srun is on PATH and `start-slurm.sh status` says all daemons are up. */
export function slurmUnavailableReason(): string | null {
  availability ??= checkAvailability();
  return availability.available ? null : availability.reason;
}

/** The cluster's node names in sinfo's order ([] when Slurm is not available). */
export function slurmNodes(): string[] {
  availability ??= checkAvailability();
  return availability.available ? availability.nodes : [];
}

function checkAvailability(): Availability {
  if (Bun.which("srun") === null) return { available: false, reason: "srun is not on PATH" };
  if (!existsSync(SLURM_CONF)) return { available: false, reason: `${SLURM_CONF} does not exist (the local cluster was never started)` };
  const status = Bun.spawnSync(["bash", START_SLURM, "status"], { env: slurmEnv(), stdout: "pipe", stderr: "pipe", timeout: 20_000 });
  if (status.exitCode !== 0) {
    // Its first line says which daemons are up: "munged_pid=12 slurmctld_pid=none slurmd_pid=none".
    const pids = `${status.stdout.toString()}${status.stderr.toString()}`.trim().split("\n")[0];
    return { available: false, reason: `the local Slurm is not running (start-slurm.sh status: ${pids})` };
  }
  const sinfo = Bun.spawnSync(["sinfo", "-h", "-N", "-o", "%N"], { env: slurmEnv(), stdout: "pipe", stderr: "pipe", timeout: 20_000 });
  const nodes = [
    ...new Set(
      sinfo.stdout
        .toString()
        .split("\n")
        .filter((line) => line !== ""),
    ),
  ];
  if (sinfo.exitCode !== 0 || nodes.length === 0) return { available: false, reason: `sinfo lists no node (${sinfo.stderr.toString().trim()})` };
  return { available: true, nodes };
}

const NOTED = Symbol.for("warmbench.test.slurm-skip-noted");

/**
 * `describe` for tests that need the local Slurm (with at least `minNodes` nodes): runs `body` when it is up;
 * otherwise replaces it with one skipped test (and one stderr message per reason and test process) or, under CI,
 * with one failing test that says why.
 */
export function describeSlurm(name: string, body: () => void, { minNodes = 1 }: { minNodes?: number } = {}): void {
  const nodeCount = slurmNodes().length;
  const reason = slurmUnavailableReason() ?? (nodeCount < minNodes ? `the local Slurm has ${nodeCount} node(s) and these tests need ${minNodes}` : null);
  if (reason === null) {
    describe(name, body);
    return;
  }
  if (isCi()) {
    describe(name, () => {
      test(`the local Slurm is up with at least ${minNodes} node(s) (CI=true requires it)`, () => {
        throw new Error(`Slurm is not available: ${reason}. npm test starts it as root; ${HOW_TO_START}`);
      });
    });
    return;
  }
  const registry = globalThis as Record<symbol, Set<string> | undefined>;
  registry[NOTED] ??= new Set<string>();
  const noted = registry[NOTED];
  if (!noted.has(reason)) {
    noted.add(reason);
    console.warn(`[slurm] skipping the Slurm tests: ${reason}. To run them, ${HOW_TO_START}`);
  }
  // One skipped entry instead of describe.skip(name, body): that would also list the body's hooks as skipped tests.
  describe(name, () => {
    test.skip(`needs the local Slurm: ${reason}`, () => {});
  });
}

/** Runs a Slurm client command (`["sbatch", ...]`, `["scontrol", ...]`) to completion against the local cluster. */
export async function slurmExec(argv: string[], opts: SlurmRunOptions = {}): Promise<SlurmResult> {
  const startMs = performance.now();
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: slurmEnv(opts.env),
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const termTimer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGTERM"); // srun passes SIGTERM on to the tasks and cancels the step
    killTimer = setTimeout(() => proc.kill("SIGKILL"), KILL_GRACE_MS);
  }, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(termTimer);
  clearTimeout(killTimer);
  return { code, stdout, stderr, timedOut, elapsedMs: performance.now() - startMs };
}

/** `srun ...args` on the local cluster; `opts.env` reaches every task (srun's default --export=ALL). */
export function srun(args: string[], opts: SlurmRunOptions = {}): Promise<SlurmResult> {
  return slurmExec(["srun", ...args], opts);
}

/**
 * Waits until squeue lists no job named `jobName` (a finished job stays "completing" for a moment) and returns
 * the ids still listed when `timeoutMs` ran out: [] means the queue is clean.
 */
export async function waitForNoJobs(jobName: string, timeoutMs = 15_000): Promise<string[]> {
  const deadlineMs = performance.now() + timeoutMs;
  for (;;) {
    const listed = await slurmExec(["squeue", "-h", "-n", jobName, "-o", "%i %T"], { timeoutMs: 10_000 });
    const jobs = listed.code === 0 ? listed.stdout.split("\n").filter((line) => line.trim() !== "") : [`squeue exited ${listed.code}: ${listed.stderr.trim()}`];
    if (jobs.length === 0 || performance.now() >= deadlineMs) return jobs;
    await Bun.sleep(200);
  }
}
