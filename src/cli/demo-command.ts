/** `warmbench demo`: a short sweep against a mock server started for it, with a bundled tokenizer. */
import { relaunchWithFetchCap } from "./relaunch.ts";
import { WORKER_ENV } from "../shard/placement.ts";
import { runInFlightLimit } from "../sweep/plan.ts";
import { warmbenchCommand } from "./command.ts";
import { sweep } from "./sweep.ts";

export const demoCommand = warmbenchCommand("demo", "Run a short sweep against a mock server started for it, with a bundled tokenizer", async (raw) => {
  const { demoOptions, startDemoMock, DEMO_MOCK_URL_ENV } = await import("./demo.ts");
  const coordinatorsMock = process.env[DEMO_MOCK_URL_ENV];
  if (coordinatorsMock !== undefined && process.env[WORKER_ENV.rank] !== undefined) return sweep(demoOptions(raw, coordinatorsMock));
  // Validate (against a placeholder URL) and relaunch before the demo's mock exists, so it starts once.
  const planned = demoOptions(raw, "http://127.0.0.1:1");
  const relaunched = await relaunchWithFetchCap(runInFlightLimit(planned));
  if (relaunched !== null) return relaunched;
  const mock = await startDemoMock({ chat: planned.endpoint === "chat" });
  // Local workers inherit this environment.
  process.env[DEMO_MOCK_URL_ENV] = mock.url;
  try {
    return await sweep(demoOptions(raw, mock.url));
  } finally {
    await mock.stop();
  }
});
