/** Every study the engine runs on each point, in this order (their samples appear in the evidence block in it too). */
import type { Study } from "../study.ts";
import { fidelityStudy } from "./fidelity-study.ts";
import { ledgerStudy } from "./ledger-study.ts";
import { telemetryStudy } from "./telemetry-study.ts";

export const STUDIES: readonly Study[] = [fidelityStudy, ledgerStudy, telemetryStudy];
