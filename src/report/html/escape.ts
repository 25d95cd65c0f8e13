/** Making text from a results file inert in an HTML page. */

const HTML_ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text for an element's content or a quoted attribute value. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);

/**
 * JSON for the content of a <script type="application/json"> element: `<`, `>` and `&` as \u escapes, so no string
 * in it can close the element or open a comment; JSON.parse reads it back unchanged.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/** A CSP source hash of an inline script's exact text. */
export const sha256Base64 = (text: string): string => `sha256-${new Bun.CryptoHasher("sha256").update(text).digest("base64")}`;
