// The docs' figures are the result files' figures: every generated block of README.md and docs/ is rendered again
// from bench/results/*.json, test/mutation/summary.json and src/errors.ts, and must be what is committed. Outside
// those blocks, README.md and docs/performance.md hold no measured figure at all (a hand-typed one could not be
// traced), and no bench output exists except each scenario's own JSON.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { benchFiles, blockNames, docFiles, regenerate, renderBlock } from "../../../docs/generate.ts";
import { burstTarget } from "../../../bench/scenarios/workers.ts";
import { EXIT } from "../../../src/errors.ts";

const root = resolve(import.meta.dir, "../../..");
const read = (rel: string): string => readFileSync(join(root, rel), "utf8");

/** Text outside generated blocks, fenced code and inline code. */
function prose(text: string): string {
  return text
    .replace(/<!-- generated: [\s\S]*?<!-- end generated -->/g, "")
    .replace(/```[\s\S]*?```/g, "")
    .replace(/`[^`\n]*`/g, "");
}

/** A number followed by a unit of time, memory, rate or score: what a measurement looks like in prose. */
const FIGURE = /\b\d[\d.,]*\s?(ms|µs|us|s|MiB|GiB|MB|GB|KB|req\/s|ev\/s|events\/s|%|x)(?![\w/])/g;

describe("generated docs", () => {
  test("every generated block equals a fresh rendering of the files it comes from", () => {
    const files = benchFiles(root);
    const stale: string[] = [];
    for (const rel of docFiles(root)) {
      const text = read(rel);
      const fresh = regenerate(text, root, files);
      if (fresh !== text)
        stale.push(
          `${rel}: ${blockNames(text)
            .filter((n) => !text.includes(`<!-- generated: ${n} -->\n${renderBlock(n, root, files)}\n`))
            .join(", ")}`,
        );
    }
    expect(stale).toEqual([]);
  });

  test("docs/performance.md renders every full bench scenario and the mutation summary", () => {
    const names = blockNames(read("docs/performance.md"));
    expect(names).toContain("bench:targets");
    expect(names).toContain("mutation:summary");
    for (const scenario of benchFiles(root).keys()) expect(names).toContain(`bench:${scenario}`);
  });

  test("README.md and docs/performance.md state no figure outside generated blocks", () => {
    for (const rel of ["README.md", "docs/performance.md"]) expect({ rel, figures: prose(read(rel)).match(FIGURE) ?? [] }).toEqual({ rel, figures: [] });
  });

  test("the prose check sees a hand-typed figure", () => {
    expect(prose("peak RSS 603 MiB, cold start 0.44 s, `--settle 1` ok").match(FIGURE)).toEqual(["603 MiB", "0.44 s"]);
  });

  test("bench/results holds only each scenario's own JSON", () => {
    const names = readdirSync(join(root, "bench/results"));
    expect(names.filter((n) => !n.endsWith(".json"))).toEqual([]);
    for (const [name, d] of benchFiles(root)) expect({ name, file: d.name, quick: d.quick }).toEqual({ name, file: name, quick: false });
  });

  test("a stale figure is caught: the rendering follows the JSON", () => {
    const files = benchFiles(root);
    const block = renderBlock("bench:cold-start", root, files);
    const cold = files.get("cold-start")!;
    const changed = { ...cold, rows: cold.rows.map((r) => r.map((c) => (c === cold.rows[0]![2] ? `${c}1` : c))) };
    expect(renderBlock("bench:cold-start", root, new Map([...files, ["cold-start", changed]]))).not.toBe(block);
  });

  test("the exit-code table lists every code of src/errors.ts once", () => {
    const table = renderBlock("exit-codes", root);
    for (const [name, code] of Object.entries(EXIT)) expect(table).toContain(`| ${code} | \`${name}\` |`);
    expect(read("docs/reference/exit-codes.md")).toContain(table);
  });

  test("an unknown block or a scenario without results is an error naming it", () => {
    expect(() => renderBlock("bench:nope", root)).toThrow("bench:nope");
    expect(() => renderBlock("figures", root)).toThrow("figures");
  });
});

describe("no ratio from a lone sample", () => {
  const side = (count: number, p99: number) => ({ bursts: { count, lastDelayP50: p99, lastDelayP99: p99 } }) as never;
  test("one burst on one side: no ratio, the target says why", () => {
    const { target, ratio } = burstTarget(side(1, 6), side(99, 26), 1, 2, false);
    expect(ratio).toBeNull();
    expect(target.pass).toBeNull();
    expect(target.measured).toContain("not measured: 1 steady burst");
  });
  test("enough bursts on both sides: the ratio is made and judged", () => {
    const { target, ratio } = burstTarget(side(50, 12), side(50, 3), 4, 16, false);
    expect(ratio).toBe(0.25);
    expect(target.pass).toBe(true);
  });
});
