/** The message of the UsageError `f` throws; fails the test when it throws nothing, or something else. */
import { expect } from "bun:test";
import { UsageError } from "../../src/errors.ts";

export function usageMessage(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error("no UsageError");
}
