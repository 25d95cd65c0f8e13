import { expect, test } from "bun:test";
import { escapeHtml, jsonForScript } from "../../../src/report/html/escape.ts";
import { escapeMarkdownCell, renderMarkdownTable } from "../../../src/report/markdown.ts";

const EVIL = `<img src=x onerror=alert(1)></script><!-- "it's" & more \u2028`;

test("HTML text and attributes cannot carry markup", () => {
  expect(escapeHtml(EVIL)).toBe("&lt;img src=x onerror=alert(1)&gt;&lt;/script&gt;&lt;!-- &quot;it&#39;s&quot; &amp; more \u2028");
});

test("JSON in a script element cannot close it, and reads back unchanged", () => {
  const json = jsonForScript({ label: EVIL });
  expect(json).not.toMatch(/[<>&\u2028]/);
  expect(JSON.parse(json)).toEqual({ label: EVIL });
});

test("Markdown cells cannot break the table or carry HTML", () => {
  expect(escapeMarkdownCell("a|b\n<b>x</b>")).toBe("a\\|b \\<b\\>x\\</b\\>");
  expect(renderMarkdownTable({ columns: ["run", "p99 ms"], rows: [["x|y", "12.50"]] })).toBe("| run | p99 ms |\n|---|---:|\n| x\\|y | 12.50 |");
});
