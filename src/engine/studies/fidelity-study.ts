/**
 * The cache-fidelity check as a study (--check-fidelity): after the point's measurement (its figures are taken), the
 * samples its plan names asked cold and warm (fidelity-check.ts), compared into the line's fidelity keys. An
 * interrupted point is not checked: the run is ending.
 */
import { checkFidelity, fidelityOptions } from "../fidelity-check.ts";
import type { Study } from "../study.ts";

export const fidelityStudy: Study = {
  name: "fidelity",
  async after(point, ctx, plan) {
    const asked = plan.fidelity;
    if (ctx.opts.fidelity === undefined || asked === undefined || asked === null || point.measurement.interrupted) return null;
    const keys = await checkFidelity({ backend: ctx.backend, ctl: ctx.ctl }, asked.samples(point), fidelityOptions(ctx, asked.outputLen));
    return { keys, samples: { fidelity: keys.fidelity_checked } };
  },
};
