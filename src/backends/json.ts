/** JSON helpers shared by the backends' event scanners. */

/** True for a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The message of an `{"error": ...}` value: `{message}` object, bare string, or the JSON itself. */
export function errorMessage(error: unknown): string {
  if (typeof error === "string") return error;
  if (isObject(error) && typeof error.message === "string") return error.message;
  return JSON.stringify(error) ?? "error";
}

const decoder = new TextDecoder();

/**
 * An event's payload parsed as a JSON object, or null with `out.message` saying why it is not one (the event is then
 * "invalid"): the full-parse reading every scanner falls back to.
 */
export function parseEventObject(payload: Uint8Array, out: { message: string }): Record<string, unknown> | null {
  let event: unknown;
  try {
    event = JSON.parse(decoder.decode(payload));
  } catch {
    out.message = `invalid JSON event: ${decoder.decode(payload.subarray(0, 100))}`;
    return null;
  }
  if (isObject(event)) return event;
  out.message = "event is not a JSON object";
  return null;
}

const DONE = "[DONE]";

/** True for the `[DONE]` payload (trailing blanks allowed), checked on bytes without decoding. */
export function isDonePayload(payload: Uint8Array): boolean {
  if (payload.length < DONE.length) return false;
  for (let k = 0; k < DONE.length; k++) {
    if (payload[k] !== DONE.charCodeAt(k)) return false;
  }
  for (let k = DONE.length; k < payload.length; k++) {
    const byte = payload[k];
    if (byte !== 32 && byte !== 9 && byte !== 10 && byte !== 13) return false;
  }
  return true;
}

/** `value` as a list of non-negative ints (token ids), or null. */
export function intList(value: unknown): number[] | null {
  if (!Array.isArray(value)) return null;
  for (const v of value) if (typeof v !== "number" || !Number.isInteger(v) || v < 0) return null;
  return value as number[];
}
