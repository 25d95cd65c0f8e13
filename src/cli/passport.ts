/**
 * `warmbench passport`: the server's cache geometry measured from outside (src/passport), on the console and as one JSON
 * file; SIGINT stops it (exit 130).
 */
import { log } from "../log.ts";
import { EXIT } from "../errors.ts";
import { createInterrupt } from "../interrupt.ts";
import { runPassport } from "../passport/run-passport.ts";
import { type ParsedFlags, write } from "./command.ts";
import { parsePassportOptions } from "./passport-options.ts";
import { renderPassport } from "../report/passport-console.ts";
import { writeArtifact } from "../output/results-writer.ts";
import { checkOutputWritable } from "../output/jsonl-file.ts";
import { outputFailures } from "../write-guard.ts";

export async function passportCommand(raw: ParsedFlags): Promise<number> {
  // Warnings and errors only: the passport itself goes to stdout.
  if (raw.quiet === true && raw.verbose !== true) log.level = 1;
  const opts = parsePassportOptions(raw);
  // Refused before anything is sent, like every command's outputs: a folder, a missing or read-only one, /dev/full.
  if (opts.outputFile !== null) checkOutputWritable(opts.outputFile, "--output-file");
  const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
  process.on("SIGINT", interrupt.onSignal);
  process.on("SIGTERM", interrupt.onSignal);
  const p = await runPassport(opts, interrupt.signal);
  write(renderPassport(p));
  const file = opts.outputFile;
  if (file) {
    if (writeArtifact("--output-file", file, `${JSON.stringify(p, null, 2)}\n`)) log.info(`Passport saved to ${file}`);
  }
  if (outputFailures().length > 0) {
    log.error(`${outputFailures().join("; ")}: exit code ${EXIT.outputFailed}`);
    return EXIT.outputFailed;
  }
  if (p.requests_failed > 0) {
    log.error(
      `${p.requests_failed} of the passport's ${p.requests_sent} requests failed (first: ${p.failures[0]}): the figures they were part of are not measured (exit ${EXIT.requestsFailed})`,
    );
    return EXIT.requestsFailed;
  }
  return EXIT.ok;
}
