import { createConsola } from "consola";
import { escapeControls } from "./terminal-text.ts";

/** Logs go to stderr so that stdout carries only the report. */
export const log = createConsola({ stdout: process.stderr, stderr: process.stderr });

// Every log line is escaped before consola colours it: server text (a version, an error body) holds no live escape.
for (const method of ["log", "info", "success", "warn", "error", "fatal", "debug", "trace", "start", "fail", "ready", "box"] as const) {
  const original = log[method].bind(log) as (...args: unknown[]) => void;
  (log as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => original(...args.map((a) => (typeof a === "string" ? escapeControls(a) : a)));
}
