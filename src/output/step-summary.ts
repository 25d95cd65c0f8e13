/** GitHub Actions' job summary: when GITHUB_STEP_SUMMARY names a file, a run or a compare appends its Markdown there. */
import { appendFileSync } from "node:fs";
import { log } from "../log.ts";

/** Appends `markdown` to $GITHUB_STEP_SUMMARY if set; a failure to write is a warning, never the run's failure. */
export function appendStepSummary(markdown: string, env: Record<string, string | undefined> = process.env): void {
  const path = env.GITHUB_STEP_SUMMARY;
  if (!path) return;
  try {
    appendFileSync(path, markdown.endsWith("\n") ? markdown : `${markdown}\n`);
  } catch (err) {
    log.warn(`GITHUB_STEP_SUMMARY: cannot append to ${path}: ${(err as NodeJS.ErrnoException).code ?? err}`);
  }
}
