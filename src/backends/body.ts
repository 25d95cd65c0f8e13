/**
 * Request bodies as templates split around the prompt (its token ids, or its text for chat), shared by every
 * backend: the prompt is serialized once per prompt set and a body is then one memcpy, done before the request's
 * clock starts.
 */

/** The request body split around the ids digits, so bodies are memcpy'd together, never re-serialized. */
export interface BodyTemplate {
  head: Uint8Array;
  tail: Uint8Array;
  /** --extra-request-body replaced the prompt's key: the body is sent as is, as the script's dict merge would. */
  idsOverridden: boolean;
  /** Put between the prefix part and the suffix part when both are non-empty: "," between ids, nothing in text. */
  separator: Uint8Array;
}

/** Put this value where the ids list goes in the payload given to createTemplate. */
export const IDS_PLACEHOLDER = "\u0000warmbench-ids\u0000";
/** Put this value where the prompt text goes (a JSON string: the parts are escaped string content). */
export const TEXT_PLACEHOLDER = "\u0000warmbench-text\u0000";

const encoder = new TextEncoder();
const COMMA = new Uint8Array([44]);
const NOTHING = new Uint8Array(0);

/** Serializes `payload` (key order kept) and splits it at the IDS_PLACEHOLDER (or TEXT_PLACEHOLDER) value. */
export function createTemplate(payload: Record<string, unknown>): BodyTemplate {
  const json = JSON.stringify(payload);
  for (const [placeholder, open, close, separator] of [
    [IDS_PLACEHOLDER, "[", "]", COMMA],
    [TEXT_PLACEHOLDER, '"', '"', NOTHING],
  ] as const) {
    const mark = JSON.stringify(placeholder);
    const at = json.indexOf(mark);
    if (at < 0) continue;
    return {
      head: encoder.encode(json.slice(0, at) + open),
      tail: encoder.encode(close + json.slice(at + mark.length)),
      idsOverridden: false,
      separator,
    };
  }
  return { head: encoder.encode(json), tail: NOTHING, idsOverridden: true, separator: COMMA };
}

/** Text as the content of a JSON string (escaped, without the quotes), UTF-8: one prompt part of a text body. */
export function serializeText(text: string): Uint8Array {
  return encoder.encode(JSON.stringify(text).slice(1, -1));
}

/**
 * One request body as views, nothing copied: head, prefix digits, [","], suffix digits, tail. The prefix
 * digits are shared by every request of a pct, so 4096 in-flight 70k-token prompts cost one prefix, not 4096.
 * The suffix may come in chunks of digits, which are joined by "," too.
 */
export function bodyParts(t: BodyTemplate, prefixDigits: Uint8Array, suffixDigits: Uint8Array | readonly Uint8Array[]): Uint8Array[] {
  if (t.idsOverridden) return [t.head];
  const parts = [t.head];
  let digits = false;
  for (const piece of [prefixDigits, ...(suffixDigits instanceof Uint8Array ? [suffixDigits] : suffixDigits)]) {
    if (piece.length === 0) continue;
    if (digits) parts.push(t.separator);
    parts.push(piece);
    digits = true;
  }
  parts.push(t.tail);
  return parts.filter((p) => p.length > 0);
}

/** One request body: head + prefix digits [+ ","] + suffix digits + tail, in one allocation. */
export function buildBody(t: BodyTemplate, prefixDigits: Uint8Array, suffixDigits: Uint8Array): Uint8Array {
  if (t.idsOverridden) return t.head;
  const separator = prefixDigits.length > 0 && suffixDigits.length > 0 ? t.separator : NOTHING;
  const out = new Uint8Array(t.head.length + prefixDigits.length + separator.length + suffixDigits.length + t.tail.length);
  let at = 0;
  out.set(t.head, at);
  at += t.head.length;
  out.set(prefixDigits, at);
  at += prefixDigits.length;
  out.set(separator, at);
  at += separator.length;
  out.set(suffixDigits, at);
  at += suffixDigits.length;
  out.set(t.tail, at);
  return out;
}

/**
 * A body whose ids are several serialized parts in order (a conversation's history chunks and its new turn), as
 * views: head, part, ",", part, ..., tail. Empty parts are skipped.
 */
export function bodyFromParts(t: BodyTemplate, digitParts: readonly Uint8Array[]): Uint8Array[] {
  if (t.idsOverridden) return [t.head];
  const out: Uint8Array[] = [t.head];
  let first = true;
  for (const part of digitParts) {
    if (part.length === 0) continue;
    if (!first) out.push(COMMA);
    out.push(part);
    first = false;
  }
  out.push(t.tail);
  return out.filter((p) => p.length > 0);
}
