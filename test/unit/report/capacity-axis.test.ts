import { describe, expect, test } from "bun:test";
import { valueAxis } from "../../../src/report/capacity-sections.ts";

describe("the capacity chart's value axis", () => {
  test("probes far past the SLO (more than 20x the lowest value) get a log scale, so the SLO and passing probes stay readable", () => {
    expect(valueAxis([40, 52, 48, 1208, 900]).type).toBe("logarithmic");
  });
  test("values within 20x, or a 0 among them (a log scale has none), stay linear from 0", () => {
    expect(valueAxis([40, 52, 48, 300])).toEqual({ title: "gate value", type: "linear", min: 0 });
    expect(valueAxis([0, 1, 5000]).type).toBe("linear");
    expect(valueAxis([]).type).toBe("linear");
  });
});
