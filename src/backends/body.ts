/**
 * Request bodies as templates split around the prompt's token ids, shared by every backend: the ids are
 * serialized once per prompt set and a body is then one memcpy, done before the request's clock starts.
 */

/** The request body split around the ids digits, so bodies are memcpy'd together, never re-serialized. */
export interface BodyTemplate {
  head: Uint8Array;
  tail: Uint8Array;
  /** --extra-request-body replaced the ids key: the body is sent as is, as the script's dict merge would. */
  idsOverridden: boolean;
}

/** Put this value where the ids list goes in the payload given to createTemplate. */
export const IDS_PLACEHOLDER = "\u0000warmbench-ids\u0000";

const encoder = new TextEncoder();

/** Serializes `payload` (key order kept) and splits it at the IDS_PLACEHOLDER value. */
export function createTemplate(payload: Record<string, unknown>): BodyTemplate {
  const json = JSON.stringify(payload);
  const mark = JSON.stringify(IDS_PLACEHOLDER);
  const at = json.indexOf(mark);
  if (at < 0) return { head: encoder.encode(json), tail: new Uint8Array(0), idsOverridden: true };
  return {
    head: encoder.encode(json.slice(0, at) + "["),
    tail: encoder.encode("]" + json.slice(at + mark.length)),
    idsOverridden: false,
  };
}

const COMMA = new Uint8Array([44]);

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
    if (digits) parts.push(COMMA);
    parts.push(piece);
    digits = true;
  }
  parts.push(t.tail);
  return parts.filter((p) => p.length > 0);
}

/** One request body: head + prefix digits [+ ","] + suffix digits + tail, in one allocation. */
export function buildBody(t: BodyTemplate, prefixDigits: Uint8Array, suffixDigits: Uint8Array): Uint8Array {
  if (t.idsOverridden) return t.head;
  const comma = prefixDigits.length > 0 && suffixDigits.length > 0 ? 1 : 0;
  const out = new Uint8Array(t.head.length + prefixDigits.length + comma + suffixDigits.length + t.tail.length);
  let at = 0;
  out.set(t.head, at);
  at += t.head.length;
  out.set(prefixDigits, at);
  at += prefixDigits.length;
  if (comma) out[at++] = 44; // ","
  out.set(suffixDigits, at);
  at += suffixDigits.length;
  out.set(t.tail, at);
  return out;
}
