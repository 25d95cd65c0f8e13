/**
 * Bun's fetch keeps at most 256 requests in flight per origin unless BUN_CONFIG_MAX_HTTP_REQUESTS is in the
 * environment when the process starts; setting it at run time does nothing. So for a larger concurrency the
 * process runs itself again with the variable set, and passes on its exit code.
 */
import { log } from "../log.ts";
import { selfArgs, selfCommand } from "../self-command.ts";

const BUN_DEFAULT_CAP = 256;
const ENV = "BUN_CONFIG_MAX_HTTP_REQUESTS";

/** Returns null when this process can go on as it is, else the exit code of the relaunched child. */
export async function relaunchWithFetchCap(concurrency: number): Promise<number | null> {
  const current = Number(process.env[ENV] ?? BUN_DEFAULT_CAP);
  // A few spare slots for flush and warm requests that may overlap the measured ones.
  const needed = Math.min(65535, concurrency + 8);
  if (!(concurrency > BUN_DEFAULT_CAP) || current >= needed) return null;
  if (process.env.WARMBENCH_RELAUNCHED === "1") {
    log.warn(`${ENV}=${current} is below --max-concurrency ${concurrency}: fetch will queue requests`);
    return null;
  }
  log.debug(`relaunching with ${ENV}=${needed}`);
  const child = Bun.spawn([...selfCommand(), ...selfArgs()], {
    env: { ...process.env, [ENV]: String(needed), WARMBENCH_RELAUNCHED: "1" },
    stdio: ["inherit", "inherit", "inherit"],
  });
  // Every signal is passed on: `kill -INT` or `timeout -s INT` reach this pid alone (0.3 ignored SIGINT here, so the
  // child ran on for minutes). A terminal's Ctrl-C reaches the child too, and the child takes the two copies that
  // arrive together as one signal (interrupt.ts), so it still stops gracefully and writes what it measured.
  process.on("SIGINT", () => child.kill("SIGINT"));
  process.on("SIGTERM", () => child.kill("SIGTERM"));
  return await child.exited;
}
