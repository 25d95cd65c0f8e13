import { describe, expect, test } from "bun:test";
import { UsageError } from "../../../src/errors.ts";
import {
  autoWorkers,
  bindAddress,
  parseCoordinatorFlag,
  parseShardFlag,
  parseWorkersFlag,
  resolvePlacement,
  slurmPort,
  type PlacementFlags,
} from "../../../src/shard/placement.ts";

const none: PlacementFlags = { workers: null, shard: null, coordinator: null, inFlight: 4 };
const slurm = (over: Record<string, string | undefined> = {}) => ({
  SLURM_PROCID: "2",
  SLURM_NTASKS: "4",
  SLURM_STEP_ID: "0",
  SLURM_JOB_ID: "17",
  SLURM_STEP_NODELIST: "wbnode1",
  ...over,
});

describe("flags", () => {
  test("--workers, --shard and --coordinator values", () => {
    expect(parseWorkersFlag("auto")).toBe("auto");
    expect(parseWorkersFlag("3")).toBe(3);
    expect(() => parseWorkersFlag("0")).toThrow(UsageError);
    expect(() => parseWorkersFlag("two")).toThrow('--workers: expected a process count from 1 to 1024 or "auto", got "two"');
    expect(parseShardFlag("1/4")).toEqual({ rank: 1, size: 4 });
    expect(parseShardFlag("auto")).toBe("auto");
    expect(() => parseShardFlag("4/4")).toThrow("0 <= I < N");
    expect(() => parseShardFlag("1")).toThrow("--shard: expected I/N");
    expect(parseCoordinatorFlag("node1:29500")).toEqual({ hostname: "node1", port: 29500 });
    expect(parseCoordinatorFlag("[::1]:80")).toEqual({ hostname: "::1", port: 80 });
    expect(() => parseCoordinatorFlag("node1")).toThrow("--coordinator: expected HOST:PORT");
  });

  test("auto workers: one per 256 streams, at most cores - 1, at least 1", () => {
    expect(autoWorkers(4, 16)).toBe(1);
    expect(autoWorkers(1024, 16)).toBe(4);
    expect(autoWorkers(4096, 16)).toBe(15);
    expect(autoWorkers(4096, 2)).toBe(1);
  });
});

describe("resolvePlacement", () => {
  test("alone, and local workers", () => {
    expect(resolvePlacement(none, {}, 8)).toEqual({ kind: "single" });
    expect(resolvePlacement({ ...none, workers: 3 }, {}, 8)).toEqual({ kind: "local", size: 3 });
    expect(resolvePlacement({ ...none, workers: 1 }, {}, 8)).toEqual({ kind: "single" });
    expect(resolvePlacement({ ...none, workers: "auto", inFlight: 1024 }, {}, 8)).toEqual({ kind: "local", size: 4 });
    expect(() => resolvePlacement({ ...none, workers: 2, shard: "auto" }, {}, 8)).toThrow("--workers and --shard exclude each other");
  });

  test("local workers are capped by the cores (4 a core) and by what the memory holds, saying what was asked", () => {
    // 0.4 started 63 copies for --workers 64 on 2 cores.
    expect(resolvePlacement({ ...none, workers: 64 }, {}, 2)).toEqual({ kind: "local", size: 8, cappedFrom: 64 });
    expect(resolvePlacement({ ...none, workers: 64 }, {}, 2, 3)).toEqual({ kind: "local", size: 3, cappedFrom: 64 });
    expect(resolvePlacement({ ...none, workers: 5 }, {}, 2, 100)).toEqual({ kind: "local", size: 5 });
    expect(resolvePlacement({ ...none, workers: 4 }, {}, 2, 1)).toEqual({ kind: "single" });
  });

  test("Slurm, one node: a unix socket keyed by job and step, and a token file rank 0 fills with a random token", () => {
    const p = resolvePlacement({ ...none, shard: "auto" }, slurm(), 8);
    expect(p).toMatchObject({ kind: "shard", rank: 2, size: 4, launcher: "slurm", nodes: ["wbnode1"], token: "" });
    expect(p.kind === "shard" && p.address.kind === "unix" && p.address.path.endsWith("/slurm-17.0.sock")).toBe(true);
    // Never derived from public ids (0.3 hashed uid, job and step): the token is read from the private directory.
    expect(p.kind === "shard" && p.tokenFile?.endsWith("/slurm-17.0.token")).toBe(true);
    // A token the user gave is used as it is, and no file is needed.
    const given = resolvePlacement({ ...none, shard: "auto" }, slurm({ WARMBENCH_SHARD_TOKEN: "mine" }), 8);
    expect(given).toMatchObject({ token: "mine" });
    expect(given.kind === "shard" && given.tokenFile).toBeUndefined();
  });

  test("Slurm, several nodes: TCP on the first node at a port of the job and step, and the secret is required", () => {
    const env = slurm({ SLURM_STEP_NODELIST: "gpu[07-08]", SLURM_STEP_ID: "3" });
    expect(() => resolvePlacement({ ...none, shard: "auto" }, env, 8)).toThrow("set WARMBENCH_SHARD_TOKEN");
    const p = resolvePlacement({ ...none, shard: "auto" }, { ...env, WARMBENCH_SHARD_TOKEN: "t" }, 8);
    expect(p).toMatchObject({ kind: "shard", address: { kind: "tcp", hostname: "gpu07", port: slurmPort(17, 3) }, token: "t" });
    expect(slurmPort(17, 3)).not.toBe(slurmPort(17, 4));
    const given = resolvePlacement({ ...none, shard: "auto", coordinator: { hostname: "10.0.0.5", port: 29500 } }, { ...env, WARMBENCH_SHARD_TOKEN: "t" }, 8);
    expect(given).toMatchObject({ address: { kind: "tcp", hostname: "10.0.0.5", port: 29500 } });
  });

  test("--shard auto outside a Slurm step (an sbatch script's own shell has no step) is refused with a hint", () => {
    expect(() => resolvePlacement({ ...none, shard: "auto" }, slurm({ SLURM_STEP_ID: undefined }), 8)).toThrow("not inside a Slurm step");
    expect(() => resolvePlacement({ ...none, shard: "auto" }, { JOB_COMPLETION_INDEX: "3" }, 8)).toThrow("--shard $JOB_COMPLETION_INDEX/<completions>");
  });

  test("--shard I/N needs --coordinator and the secret", () => {
    const shard = { rank: 1, size: 4 };
    expect(() => resolvePlacement({ ...none, shard }, {}, 8)).toThrow("every shard needs --coordinator HOST:PORT");
    const coordinator = { hostname: "127.0.0.1", port: 29500 };
    expect(() => resolvePlacement({ ...none, shard, coordinator }, {}, 8)).toThrow("set WARMBENCH_SHARD_TOKEN");
    expect(resolvePlacement({ ...none, shard, coordinator }, { WARMBENCH_SHARD_TOKEN: "t" }, 8)).toMatchObject({
      kind: "shard",
      rank: 1,
      size: 4,
      launcher: "flag",
      address: { kind: "tcp", hostname: "127.0.0.1", port: 29500 },
    });
    expect(resolvePlacement({ ...none, shard: { rank: 0, size: 1 } }, {}, 8)).toEqual({ kind: "single" });
    expect(() => resolvePlacement({ ...none, coordinator }, {}, 8)).toThrow("--coordinator needs --shard");
  });

  test("where shard 0 binds: a loopback host itself, another host every interface", () => {
    expect(bindAddress({ kind: "tcp", hostname: "127.0.0.1", port: 1 })).toEqual({ kind: "tcp", hostname: "127.0.0.1", port: 1 });
    expect(bindAddress({ kind: "tcp", hostname: "gpu07", port: 1 })).toEqual({ kind: "tcp", hostname: "0.0.0.0", port: 1 });
  });
});
