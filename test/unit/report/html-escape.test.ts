import { expect, test } from "bun:test";
import { escapeHtml, jsonForScript } from "../../../src/report/html/escape.ts";
import { escapeMarkdownCell, renderMarkdownReport, renderMarkdownTable } from "../../../src/report/markdown.ts";

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

// A server version or a history tag holding terminal controls: retitle (OSC ... BEL), clear (CSI 2J), C1 CSI, DEL.
const CONTROLS = "v1\u001b]0;owned\u0007\u001b[2J\u009b1m\u007f";
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for raw control characters is the point
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

test("HTML text shows control characters as \\xNN, never raw", () => {
  const html = escapeHtml(CONTROLS);
  expect(html).not.toMatch(RAW);
  expect(html).toBe("v1\\x1b]0;owned\\x07\\x1b[2J\\x9b1m\\x7f");
  expect(escapeHtml("a\tb\nc")).toBe("a\tb\nc");
});

test("JSON in a script element carries no raw control character, and reads back unchanged", () => {
  const json = jsonForScript({ version: CONTROLS });
  expect(json).not.toMatch(RAW);
  expect(JSON.parse(json)).toEqual({ version: CONTROLS });
});

test("Markdown cells and the whole report carry no raw control character", () => {
  expect(escapeMarkdownCell(CONTROLS)).not.toMatch(RAW);
  expect(escapeMarkdownCell(CONTROLS)).toContain("\\x1b");
  expect(renderMarkdownReport([], [], `tag ${CONTROLS}`)).not.toMatch(RAW);
});
