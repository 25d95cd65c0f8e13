/**
 * Byte-level JSON primitives for the hot-path event scanners: find, skip and read values in a UTF-8 payload
 * without decoding it to a string or building objects. Positions are byte offsets; -1 means "not there" or
 * "not well formed here", and the callers fall back to JSON.parse then.
 *
 * Strings are skipped by a native search for their closing quote, never byte by byte, and their content is not
 * validated (escapes, control characters): the scanners only need to know where a string ends.
 */

export const QUOTE = 34;
const BACKSLASH = 92;
const COMMA = 44;
const COLON = 58;
const LBRACE = 123;
const RBRACE = 125;
const LBRACKET = 91;
const RBRACKET = 93;

function isBlank(byte: number | undefined): boolean {
  return byte === 32 || byte === 9 || byte === 10 || byte === 13;
}

/** The first non-blank position at or after `at` (bytes.length when none). */
export function skipBlanks(bytes: Uint8Array, at: number): number {
  // Compact JSON has no blanks: one comparison in the usual case.
  if ((bytes[at] as number) > 32) return at;
  while (at < bytes.length && isBlank(bytes[at])) at++;
  return at;
}

export function startsWith(hay: Uint8Array, needle: Uint8Array, at: number): boolean {
  if (at < 0 || at + needle.length > hay.length) return false;
  for (let k = 0; k < needle.length; k++) {
    if (hay[at + k] !== needle[k]) return false;
  }
  return true;
}

/** True when bytes[start, end) equal `name` exactly (an unescaped key compared with a known key). */
export function bytesEqual(bytes: Uint8Array, start: number, end: number, name: Uint8Array): boolean {
  return end - start === name.length && startsWith(bytes, name, start);
}

// Buffer's search for a byte sequence is one native call and takes any Uint8Array as `this`; a JS loop over
// candidate bytes costs a call per candidate.
type NativeSearch = (this: Uint8Array, needle: Uint8Array, byteOffset: number) => number;
const nativeIndexOf = Buffer.prototype.indexOf as unknown as NativeSearch;
const nativeLastIndexOf = Buffer.prototype.lastIndexOf as unknown as NativeSearch;

/** Start of the first occurrence of `needle` at or after `from`, or -1. */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from: number): number {
  return from < 0 || needle.length === 0 ? -1 : nativeIndexOf.call(hay, needle, from);
}

/** Start of the last occurrence of `needle` that ends at or before `endBefore`, or -1. */
export function lastIndexOfBytes(hay: Uint8Array, needle: Uint8Array, endBefore: number): number {
  // A negative offset would count from the end.
  const lastStart = Math.min(endBefore, hay.length) - needle.length;
  return lastStart < 0 || needle.length === 0 ? -1 : nativeLastIndexOf.call(hay, needle, lastStart);
}

/** Strings up to this long are searched by a plain loop: a native indexOf call costs more than ~30 bytes of it. */
const SHORT_STRING_BYTES = 32;

/**
 * Position of the quote that closes the string whose opening quote is at `openAt`, or -1 when it never closes.
 * A quote closes the string unless an odd number of backslashes precedes it.
 */
export function stringEnd(bytes: Uint8Array, openAt: number): number {
  // Keys and short values: the first quote, when no backslash comes before it.
  const limit = Math.min(bytes.length, openAt + 1 + SHORT_STRING_BYTES);
  for (let i = openAt + 1; i < limit; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) return i;
    if (byte === BACKSLASH) break;
  }
  let at = openAt + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) return -1;
    let backslashes = 0;
    while (bytes[quote - 1 - backslashes] === BACKSLASH) backslashes++;
    if ((backslashes & 1) === 0) return quote;
    at = quote + 1;
  }
}

/** True when bytes[start, end) hold a backslash (an escaped string content). */
export function hasBackslash(bytes: Uint8Array, start: number, end: number): boolean {
  const at = bytes.indexOf(BACKSLASH, start);
  return at !== -1 && at < end;
}

/** The end of the number or literal (null, true, false) at `at`, or -1 when there is none. */
export function scalarEnd(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === 110) return bytes[at + 1] === 117 && bytes[at + 2] === 108 && bytes[at + 3] === 108 ? at + 4 : -1; // null
  if (first === 116) return bytes[at + 1] === 114 && bytes[at + 2] === 117 && bytes[at + 3] === 101 ? at + 4 : -1; // true
  if (first === 102) {
    // false
    return bytes[at + 1] === 97 && bytes[at + 2] === 108 && bytes[at + 3] === 115 && bytes[at + 4] === 101 ? at + 5 : -1;
  }
  return numberEnd(bytes, at);
}

const isDigit = (byte: number | undefined): boolean => byte !== undefined && byte >= 48 && byte <= 57;

/** The end of the JSON number at `at` (`-? int frac? exp?`), or -1 when there is none. */
export function numberEnd(bytes: Uint8Array, at: number): number {
  let i = at;
  if (bytes[i] === 45) i++; // "-"
  if (bytes[i] === 48)
    i++; // a leading "0" stands alone
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
  else return -1;
  if (bytes[i] === 46) {
    // "."
    if (!isDigit(bytes[++i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  if (bytes[i] === 101 || bytes[i] === 69) {
    // "e" / "E"
    i++;
    if (bytes[i] === 43 || bytes[i] === 45) i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  return i;
}

/**
 * The value of bytes[start, end) as a non-negative integer when it is written as plain digits (at most 15), else
 * -1: a fraction, exponent or sign means an unusual number the caller should leave to JSON.parse.
 */
export function plainUint(bytes: Uint8Array, start: number, end: number): number {
  if (end <= start || end - start > 15) return -1;
  let value = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i] as number;
    if (byte < 48 || byte > 57) return -1;
    value = value * 10 + (byte - 48);
  }
  return value;
}

/** The non-negative decimal integer at `at` (after blanks), or -1 if there is none or it is not plain. */
export function readUint(bytes: Uint8Array, at: number): number {
  const start = skipBlanks(bytes, at);
  let end = start;
  while (isDigit(bytes[end])) end++;
  if (end === start) return -1;
  // A fraction or exponent means this is not the plain integer we expect: let the caller fall back.
  const next = bytes[end];
  if (next === 46 || next === 101 || next === 69) return -1;
  return plainUint(bytes, start, end);
}

/**
 * The end of the JSON value at `at` (a string, number, literal, object or array), or -1 when it is not well
 * formed. Objects and arrays are walked with a depth count; their strings are skipped natively.
 */
export function skipValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === QUOTE) {
    const end = stringEnd(bytes, at);
    return end === -1 ? -1 : end + 1;
  }
  if (first !== LBRACE && first !== LBRACKET) return scalarEnd(bytes, at);
  // Containers: track the open brackets so that a mismatched close is caught.
  const open: number[] = [];
  let i = at;
  while (i < bytes.length) {
    const byte = bytes[i] as number;
    if (byte === QUOTE) {
      const end = stringEnd(bytes, i);
      if (end === -1) return -1;
      i = end + 1;
      continue;
    }
    if (byte === LBRACE || byte === LBRACKET) open.push(byte);
    else if (byte === RBRACE || byte === RBRACKET) {
      const opened = open.pop();
      if (opened !== (byte === RBRACE ? LBRACE : LBRACKET)) return -1;
      if (open.length === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

/** Reads one member of an object walk (see walkObject) and returns the end of its value, or -1. */
export type MemberVisitor = (bytes: Uint8Array, keyStart: number, keyEnd: number, valueAt: number) => number;

/**
 * Walks the object at `at`: for each member calls `visit(bytes, keyStart, keyEnd, valueAt)` with the key's
 * content bounds (between its quotes, still escaped) and the value's first byte; `visit` returns the value's end
 * (or -1). Returns the end of the object, or -1 when it is not well formed.
 */
export function walkObject(bytes: Uint8Array, at: number, visit: MemberVisitor): number {
  if (bytes[at] !== LBRACE) return -1;
  const first = skipBlanks(bytes, at + 1);
  if (bytes[first] === RBRACE) return first + 1;
  return walkMembers(bytes, first, visit);
}

/** walkObject from the member whose key's opening quote is at `at` on, to the end of its object. */
function walkMembers(bytes: Uint8Array, at: number, visit: MemberVisitor): number {
  let i = at;
  for (;;) {
    if (bytes[i] !== QUOTE) return -1;
    const keyEnd = stringEnd(bytes, i);
    if (keyEnd === -1) return -1;
    let valueAt = skipBlanks(bytes, keyEnd + 1);
    if (bytes[valueAt] !== COLON) return -1;
    valueAt = skipBlanks(bytes, valueAt + 1);
    const valueEnd = visit(bytes, i + 1, keyEnd, valueAt);
    if (valueEnd === -1) return -1;
    i = skipBlanks(bytes, valueEnd);
    if (bytes[i] === COMMA) i = skipBlanks(bytes, i + 1);
    else if (bytes[i] === RBRACE) return i + 1;
    else return -1;
  }
}

/**
 * Walks the array at `at`: `visitFirst(valueAt)` reads its first element (it is not called for an empty array)
 * and returns that element's end (or -1); later elements are skipped. Returns the end of the array, or -1.
 */
export function walkArrayFirst(bytes: Uint8Array, at: number, visitFirst: (bytes: Uint8Array, valueAt: number) => number): number {
  if (bytes[at] !== LBRACKET) return -1;
  let i = skipBlanks(bytes, at + 1);
  if (bytes[i] === RBRACKET) return i + 1;
  let end = visitFirst(bytes, i);
  for (;;) {
    if (end === -1) return -1;
    i = skipBlanks(bytes, end);
    if (bytes[i] === RBRACKET) return i + 1;
    if (bytes[i] !== COMMA) return -1;
    end = skipValue(bytes, skipBlanks(bytes, i + 1));
  }
}

/** True when the payload (blanks aside) ends at `end`: nothing may follow the top-level value. */
export function onlyBlanksAfter(bytes: Uint8Array, end: number): boolean {
  return skipBlanks(bytes, end) === bytes.length;
}

/** A [start, end) byte range; start -1 when absent. */
export interface ByteRange {
  textStart: number;
  textEnd: number;
}

/**
 * Finds the string value of top-level `key` of the object payload and stores its content bounds (between the
 * quotes, still escaped) in `out`, or -1 when the key is absent, not a string, or the payload not well formed.
 * A repeated key counts by its last occurrence, as in JSON.parse.
 */
export function locateTopLevelString(bytes: Uint8Array, key: Uint8Array, out: ByteRange): void {
  let start = -1;
  let end = -1;
  const objectEnd = walkObject(bytes, skipBlanks(bytes, 0), (_bytes, keyStart, keyEnd, valueAt) => {
    const valueEnd = skipValue(bytes, valueAt);
    if (bytesEqual(bytes, keyStart, keyEnd, key)) {
      const isString = bytes[valueAt] === QUOTE && valueEnd !== -1;
      start = isString ? valueAt + 1 : -1;
      end = isString ? valueEnd - 1 : -1;
    }
    return valueEnd;
  });
  const ok = objectEnd !== -1 && onlyBlanksAfter(bytes, objectEnd) && start !== -1;
  out.textStart = ok ? start : -1;
  out.textEnd = ok ? end : -1;
}
