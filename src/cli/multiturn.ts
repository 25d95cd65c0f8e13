/** `warmbench multiturn`: validate, relaunch for a large concurrency, run with the interrupt wired, exit code. */
import { createInterrupt } from "../interrupt.ts";
import { log } from "../log.ts";
import { multiturnInFlight } from "../config/options.ts";
import { relaunchWithFetchCap } from "./relaunch.ts";
import { warmbenchCommand, write } from "./command.ts";
import { exitCodeFor } from "./exit-code.ts";

export const multiturnCommand = warmbenchCommand(
  "multiturn",
  "Run multi-turn conversations that grow turn by turn, and report each round's cache hits",
  async (raw) => {
    const { parseMultiturnOptions } = await import("./multiturn-options.ts");
    const { runMultiturn } = await import("../multiturn/run-multiturn.ts");
    const opts = parseMultiturnOptions(raw);
    const relaunched = await relaunchWithFetchCap(multiturnInFlight(opts));
    if (relaunched !== null) return relaunched;
    const interrupt = createInterrupt({ warn: (m) => log.warn(m), exit: (code) => process.exit(code) });
    process.on("SIGINT", interrupt.onSignal);
    process.on("SIGTERM", interrupt.onSignal);
    const outcome = await runMultiturn(opts, { out: write, signal: interrupt.signal });
    return exitCodeFor(
      { interrupted: outcome.interrupted, cacheFailures: outcome.cacheFailures, saturated: outcome.saturatedRounds, failedRequests: outcome.failedRequests, gateFailures: [] },
      opts.strict,
      "round",
    );
  },
);
