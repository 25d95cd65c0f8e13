// npm run mutants [AREA...]: StrykerJS over the hot path and the metrics, one area at a time.
// The command runner cannot tell which test covers a mutant, so every mutant re-runs the whole test command; running
// each group of files against its own unit tests (0.3-3 s) instead of all of them (20 s) is what makes a full run
// fit in about 45 minutes on 2 cores. A mutant that only another group's tests would kill counts as survived.
// The scores land in test/mutation/reports/<area>.json (ignored by git), as a table on stdout, and in the committed
// test/mutation/summary.json that docs/performance.md is generated from: each area run replaces its own entry there,
// so the summary says, per area, when and on which commit its figures were measured.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";

interface Area {
  mutate: string[];
  tests: string[];
}

const W = "test/unit/workload/";
const C = "test/unit/client/";
const AREAS: Record<string, Area> = {
  metrics: { mutate: ["src/metrics/**/*.ts"], tests: ["test/unit/metrics/"] },
  events: {
    mutate: ["src/backends/*-events.ts"],
    tests: ["test/unit/backends/", `${C}sglang-events.test.ts`],
  },
  rng: { mutate: ["src/workload/rng.ts", "src/workload/arrivals.ts"], tests: [`${W}rng.test.ts`, `${W}arrivals.test.ts`, `${W}prompts.test.ts`] },
  prompts: {
    mutate: ["src/workload/prompt*.ts", "src/workload/pipeline-check.ts"],
    tests: ["prompts", "prompt-draw", "prompt-feed", "prompt-hash", "pipeline-check"].map((name) => `${W}${name}.test.ts`),
  },
  tokenizer: {
    mutate: ["src/workload/tokenizer.ts", "src/workload/hf-hub.ts", "src/workload/vocab.ts", "src/workload/text-prompts.ts"],
    tests: ["tokenizer", "hf-hub", "hf-token", "vocab", "text-prompts"].map((name) => `${W}${name}.test.ts`),
  },
  stream: { mutate: ["src/client/stream.ts"], tests: [`${C}stream.test.ts`] },
  client: {
    mutate: ["src/client/**/*.ts", "!src/client/stream.ts"],
    tests: ["dispatcher", "prometheus", "request-body", "sse", "text-bytes", "client-edges"].map((name) => `${C}${name}.test.ts`),
  },
};

const root = join(import.meta.dir, "..", "..");
const base = JSON.parse(readFileSync(join(import.meta.dir, "stryker.config.json"), "utf8"));
const chosen = process.argv.slice(2);
for (const name of chosen) {
  if (!(name in AREAS)) {
    console.error(`mutants: unknown area "${name}" (one of ${Object.keys(AREAS).join(", ")})`);
    process.exit(2);
  }
}
const names = chosen.length > 0 ? chosen : Object.keys(AREAS);
const configDir = join(root, "test/mutation/.stryker-tmp");
mkdirSync(configDir, { recursive: true });

interface Tally {
  killed: number;
  survived: number;
  noCoverage: number;
  timeout: number;
  other: number;
}

function tally(reportPath: string): Map<string, Tally> {
  const report = JSON.parse(readFileSync(reportPath, "utf8"));
  const byFile = new Map<string, Tally>();
  for (const [file, entry] of Object.entries<{ mutants: { status: string }[] }>(report.files)) {
    const t: Tally = { killed: 0, survived: 0, noCoverage: 0, timeout: 0, other: 0 };
    for (const m of entry.mutants) {
      if (m.status === "Killed") t.killed++;
      else if (m.status === "Survived") t.survived++;
      else if (m.status === "NoCoverage") t.noCoverage++;
      else if (m.status === "Timeout") t.timeout++;
      else t.other++;
    }
    byFile.set(file, t);
  }
  return byFile;
}

// Stryker's own definition: detected (killed + timeout) over valid (detected + survived + no coverage).
function score(t: Tally): number {
  const detected = t.killed + t.timeout;
  const valid = detected + t.survived + t.noCoverage;
  return valid === 0 ? 100 : (100 * detected) / valid;
}

/** One area's entry in test/mutation/summary.json (snake_case, as every JSON file we write). */
interface AreaSummary {
  measured_at: string;
  commit: string;
  mutate: string[];
  tests: string[];
  killed: number;
  timed_out: number;
  survived: number;
  no_coverage: number;
  /** Stryker's other states (compile errors, ignored): not counted in the score. */
  other: number;
  score_pct: number;
  files: Record<string, { detected: number; valid: number; score_pct: number }>;
}

function areaSummary(area: Area, byFile: Map<string, Tally>, total: Tally): AreaSummary {
  const commit = Bun.spawnSync(["git", "rev-parse", "HEAD"], { cwd: root }).stdout.toString().trim();
  // "+changes" when the code under test or the area's tests differ from the commit (other files do not change a score).
  const dirty =
    Bun.spawnSync(["git", "status", "--porcelain", "--", "src", ...area.tests], { cwd: root })
      .stdout.toString()
      .trim() !== "";
  const files: AreaSummary["files"] = {};
  for (const [file, t] of byFile) {
    const detected = t.killed + t.timeout;
    files[file] = { detected, valid: detected + t.survived + t.noCoverage, score_pct: round1(score(t)) };
  }
  return {
    measured_at: new Date().toISOString(),
    commit: dirty ? `${commit}+changes` : commit,
    mutate: area.mutate,
    tests: area.tests,
    killed: total.killed,
    timed_out: total.timeout,
    survived: total.survived,
    no_coverage: total.noCoverage,
    other: total.other,
    score_pct: round1(score(total)),
    files,
  };
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const summaryPath = join(root, "test/mutation/summary.json");
const summary: { areas: Record<string, AreaSummary> } = existsSync(summaryPath) ? JSON.parse(readFileSync(summaryPath, "utf8")) : { areas: {} };

let failed = false;
const rows: string[] = [];
for (const name of names) {
  const area = AREAS[name]!;
  const reportPath = join(root, `test/mutation/reports/${name}.json`);
  const config = {
    ...base,
    $schema: undefined,
    mutate: area.mutate,
    commandRunner: { command: `bun test ${area.tests.join(" ")} --timeout 20000 --bail` },
    tempDirName: `test/mutation/.stryker-tmp/${name}`,
    htmlReporter: { fileName: `test/mutation/reports/${name}.html` },
    jsonReporter: { fileName: `test/mutation/reports/${name}.json` },
  };
  const configPath = join(configDir, `${name}.config.json`);
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  console.error(`mutants: ${name}: ${area.mutate.join(" ")} against ${area.tests.join(" ")}`);
  const proc = Bun.spawnSync(["npx", "stryker", "run", configPath], { cwd: root, stdio: ["inherit", "inherit", "inherit"] });
  if (proc.exitCode !== 0 || !existsSync(reportPath)) {
    console.error(`mutants: ${name}: stryker exited ${proc.exitCode}`);
    failed = true;
    continue;
  }
  const total: Tally = { killed: 0, survived: 0, noCoverage: 0, timeout: 0, other: 0 };
  const byFile = tally(reportPath);
  for (const [file, t] of byFile) {
    for (const k of Object.keys(total) as (keyof Tally)[]) total[k] += t[k];
    rows.push(`| ${file} | ${t.killed + t.timeout} | ${t.survived + t.noCoverage} | ${score(t).toFixed(1)} % |`);
  }
  rows.push(`| **${name}** | **${total.killed + total.timeout}** | **${total.survived + total.noCoverage}** | **${score(total).toFixed(1)} %** |`);
  summary.areas[name] = areaSummary(area, byFile, total);
  // Written after every area, so a long run stopped midway keeps what it measured.
  writeFileSync(summaryPath, JSON.stringify(summary, null, 1) + "\n");
}
console.log("| file | detected | survived | score |\n|---|---:|---:|---:|");
for (const row of rows) console.log(row);
process.exit(failed ? 1 : 0);
