/** Making text from a results file inert in an HTML page. */
import { escapeControls } from "../../terminal-text.ts";

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Text for an element's content or a quoted attribute value. Control characters (a server version's ESC or BEL, a
 * history tag's) are shown as `\xNN`, as on the console: none lands raw in the file, where `cat` would run it.
 */
export const escapeHtml = (text: string): string => escapeControls(text).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * JSON for the content of a <script type="application/json"> element: `<`, `>` and `&` as \u escapes, so no string
 * in it can close the element or open a comment, and DEL and the C1 controls too (JSON.stringify escapes the C0 ones
 * itself), so no control character lands raw in the file; JSON.parse reads it back unchanged.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/[\u007f-\u009f]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** A CSP source hash of an inline script's exact text. */
export const sha256Base64 = (text: string): string => `sha256-${new Bun.CryptoHasher("sha256").update(text).digest("base64")}`;
