import { createConsola } from "consola";

/** Logs go to stderr so that stdout carries only the report. */
export const log = createConsola({ stdout: process.stderr, stderr: process.stderr });
