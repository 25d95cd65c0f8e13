import { describe, expect, test } from "bun:test";
import { AGENTIC_FLAGS } from "../../../src/config/flags/agentic.ts";
import { CLIENT_FLAGS } from "../../../src/config/flags/index.ts";
import { DELAY_RULES } from "../../../src/workload/agentic/session-schedule.ts";
import { JOIN_RULES, SPAWN_RULES } from "../../../src/workload/agentic/session-plan.ts";
import { TRACE_FORMATS } from "../../../src/workload/agentic/detect.ts";
import { usageMessage } from "../../helpers/usage-error.ts";

const decl = (name: string) => AGENTIC_FLAGS.find((d) => d.name === name)!;
const parse = (name: string, text: string): unknown => decl(name).bind!.value!(text, name);

describe("agentic replay flags", () => {
  test("the rule flags offer exactly the schedule's named rules, the format flag the readers' formats", () => {
    expect(decl("delay-rule").choices).toEqual([...DELAY_RULES]);
    expect(decl("spawn-rule").choices).toEqual([...SPAWN_RULES]);
    expect(decl("join-rule").choices).toEqual([...JOIN_RULES]);
    expect(decl("trace-format").choices).toEqual(["auto", ...TRACE_FORMATS]);
  });

  test("registered for replay, each name once among the client's flags", () => {
    for (const d of AGENTIC_FLAGS) {
      expect(CLIENT_FLAGS.filter((c) => c.name === d.name)).toEqual([d]);
      expect(d.commands.replay).toBe(true);
    }
  });

  test("--start-at: a fraction or a range; --max-idle: seconds or none; --sessions: lanes >= 1", () => {
    expect(parse("start-at", "0.5")).toEqual({ from: 0.5, to: 0.5 });
    expect(parse("start-at", "0.25:0.75")).toEqual({ from: 0.25, to: 0.75 });
    expect(usageMessage(() => parse("start-at", "1"))).toBe('--start-at 1: expected a fraction in [0, 1) or a range FROM:TO, got "1"');
    expect(usageMessage(() => parse("start-at", "0.7:0.2"))).toBe("--start-at 0.7:0.2: the range's upper end is below its lower end");
    expect(parse("max-idle", "none")).toBeNull();
    expect(parse("max-idle", "2.5")).toBe(2.5);
    expect(usageMessage(() => parse("max-idle", "-1"))).toStartWith("--max-idle");
    expect(parse("sessions", "200")).toBe(200);
    expect(usageMessage(() => parse("sessions", "0"))).toStartWith("--sessions");
    expect(decl("max-idle").default).toBe(10);
  });
});
