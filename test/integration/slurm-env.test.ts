/**
 * What warmbench's sharded runs (`srun ... warmbench --shard auto`) will rely on, pinned on the real local Slurm
 * (test/slurm/start-slurm.sh): one process per task, each task's SLURM_* variables, srun carrying the shard
 * secret to every task, tasks reaching a server on 127.0.0.1, node-list expansion, what happens when one task
 * dies, sbatch --wait, and `srun -N 2` over two nodes. Each node (a slurmd on 127.0.0.1) has 8 CPUs, so a
 * plain `srun -n 8` runs on the first node alone.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, ROOT } from "../helpers/run-cli.ts";
import { describeSlurm, slurmExec, slurmNodes, srun, waitForNoJobs } from "../helpers/slurm.ts";

/** Every job these tests start carries this name, so the cleanup and the final check touch only ours. */
const JOB_NAME = "warmbench-slurm-env-test";
const BUN = process.execPath;
/** "wbnode1", "wbnode2" (or just "localhost" with SLURM_CI_NODES=1). A job that fits on one node may land on any. */
const NODES = slurmNodes();
/** sbatch --wait polls the job every 2 s, then every 8 s; a slow start on a loaded machine costs 10 s or more. */
const SBATCH_TIMEOUT_MS = 45_000;
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

/** Task code: print the variables the shard code will read, as one JSON line. */
const DUMP_ENV = `
const keys = ["SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_NODEID", "SLURMD_NODENAME",
  "SLURM_STEP_NUM_TASKS", "SLURM_STEP_TASKS_PER_NODE", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_JOB_ID",
  "SLURM_STEP_ID", "SLURM_LAUNCH_NODE_IPADDR", "SLURM_SRUN_COMM_HOST", "WARMBENCH_SHARD_TOKEN"];
console.log(JSON.stringify(Object.fromEntries(keys.map((k) => [k, process.env[k] ?? null]))));
`;

type TaskEnv = Record<string, string | null>;

/** srun -l output ("2: {...}") -> task id -> parsed JSON line. */
function parseLabeled(stdout: string): Map<number, TaskEnv> {
  const tasks = new Map<number, TaskEnv>();
  for (const line of stdout.split("\n")) {
    const m = /^\s*(\d+): (.*)$/.exec(line);
    if (m) tasks.set(Number(m[1]), JSON.parse(m[2]!) as TaskEnv);
  }
  return tasks;
}

/** `scontrol show hostnames LIST`: a Slurm host list ("wbnode[1-2]") -> its host names. */
async function expandHostlist(list: string): Promise<string[]> {
  const run = await slurmExec(["scontrol", "show", "hostnames", list]);
  expect(run.code).toBe(0);
  return run.stdout.split("\n").filter(Boolean);
}

/** SLURM_STEP_TASKS_PER_NODE ("7,1", "4(x2)") -> tasks on each node in node order. */
function tasksPerNode(value: string): number[] {
  return value.split(",").flatMap((part) => {
    const m = /^(\d+)(?:\(x(\d+)\))?$/.exec(part);
    if (!m) throw new Error(`unexpected SLURM_STEP_TASKS_PER_NODE part "${part}" in "${value}"`);
    return Array<number>(Number(m[2] ?? 1)).fill(Number(m[1]));
  });
}

function freshToken(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("hex");
}

describeSlurm("srun on the local Slurm (what --shard auto relies on)", () => {
  let tmp = "";
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), "warmbench-slurm-"));
    writeFileSync(join(tmp, "dump-env.js"), DUMP_ENV);
  });

  afterAll(async () => {
    // Only needed when a test failed half-way; the last test checks that nothing was left.
    await slurmExec(["scancel", "--full", "-n", JOB_NAME], { timeoutMs: 10_000 });
    rmSync(tmp, { recursive: true, force: true });
  });

  test("srun -n 4 runs the compiled binary once per task, and -n 8 fits the 8-CPU node", async () => {
    const four = await srun(["-Q", "-J", JOB_NAME, "-l", "-n", "4", BINARY, "--version"]);
    expect(four.stderr).toBe("");
    expect(four.code).toBe(0);
    expect(four.stdout.split("\n").filter(Boolean).sort()).toEqual([0, 1, 2, 3].map((i) => `${i}: ${VERSION}`));

    const eight = await srun(["-Q", "-J", JOB_NAME, "-n", "8", BINARY, "--version"]);
    expect(eight.code).toBe(0);
    expect(eight.stdout.split("\n").filter(Boolean)).toEqual(Array(8).fill(VERSION));
  });

  test("each task sees its own SLURM_PROCID, the step size, the node list, job and step ids and the launch address", async () => {
    const token = freshToken();
    const run = await srun(["-Q", "-J", JOB_NAME, "-l", "-n", "4", BUN, "-e", DUMP_ENV], { env: { WARMBENCH_SHARD_TOKEN: token } });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const tasks = parseLabeled(run.stdout);
    expect([...tasks.keys()].sort()).toEqual([0, 1, 2, 3]);
    const jobId = tasks.get(0)!.SLURM_JOB_ID!;
    expect(jobId).toMatch(/^[1-9]\d*$/);
    const node = tasks.get(0)!.SLURMD_NODENAME!;
    expect(NODES).toContain(node);
    for (const [label, env] of tasks) {
      expect(env).toEqual({
        SLURM_PROCID: String(label), // srun's own task label is the rank
        SLURM_NTASKS: "4",
        SLURM_LOCALID: String(label), // one node: local id = rank
        SLURM_NODEID: "0",
        SLURMD_NODENAME: node, // 4 tasks fit on one node: all of them share it
        SLURM_STEP_NUM_TASKS: "4",
        SLURM_STEP_TASKS_PER_NODE: "4",
        SLURM_STEP_NODELIST: node,
        SLURM_JOB_NODELIST: node,
        SLURM_JOB_ID: jobId,
        SLURM_STEP_ID: "0", // srun outside an allocation creates a job whose first (only) step is 0
        SLURM_LAUNCH_NODE_IPADDR: "127.0.0.1",
        SLURM_SRUN_COMM_HOST: "127.0.0.1",
        WARMBENCH_SHARD_TOKEN: token,
      });
    }

    // The next srun is a new job: (job id, step id) tells concurrent runs apart.
    const next = await srun(["-Q", "-J", JOB_NAME, "-n", "1", BUN, "-e", DUMP_ENV]);
    expect(next.code).toBe(0);
    expect(Number((JSON.parse(next.stdout) as TaskEnv).SLURM_JOB_ID)).toBeGreaterThan(Number(jobId));
  });

  test("srun's environment reaches the tasks by default, and not with --export=NONE", async () => {
    const token = freshToken();
    const cases: Array<[string[], string | null]> = [
      [[], token],
      [["--export=ALL"], token],
      [["--export=NONE"], null],
    ];
    for (const [flags, expected] of cases) {
      const run = await srun(["-Q", "-J", JOB_NAME, "-n", "2", ...flags, BUN, "-e", DUMP_ENV], { env: { WARMBENCH_SHARD_TOKEN: token } });
      expect(run.code).toBe(0);
      const seen = run.stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as TaskEnv).WARMBENCH_SHARD_TOKEN);
      expect({ flags, seen }).toEqual({ flags, seen: [expected, expected] });
    }
  });

  test("tasks reach a server on 127.0.0.1 at SLURM_LAUNCH_NODE_IPADDR and at the first node of SLURM_STEP_NODELIST", async () => {
    const seen: string[] = [];
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        const url = new URL(req.url);
        const hello = `rank=${url.searchParams.get("rank")} via=${url.searchParams.get("via")}`;
        seen.push(hello);
        return new Response(`hello ${hello}`);
      },
    });
    try {
      // The node list here is a single name; a real multi-node list needs hostlist expansion (next test).
      const task = `
        const e = process.env;
        const hosts = { launch: e.SLURM_LAUNCH_NODE_IPADDR, nodelist: e.SLURM_STEP_NODELIST.split(",")[0] };
        for (const [via, host] of Object.entries(hosts)) {
          const res = await fetch("http://" + host + ":" + e.WB_TEST_PORT + "/?rank=" + e.SLURM_PROCID + "&via=" + via);
          console.log(res.status, await res.text());
        }`;
      const run = await srun(["-Q", "-J", JOB_NAME, "-n", "4", BUN, "-e", task], { env: { WB_TEST_PORT: String(server.port) } });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const expected = [0, 1, 2, 3].flatMap((rank) => [`rank=${rank} via=launch`, `rank=${rank} via=nodelist`]).sort();
      expect(seen.sort()).toEqual(expected);
      expect(run.stdout.split("\n").filter(Boolean).sort()).toEqual(expected.map((hello) => `200 hello ${hello}`));
    } finally {
      server.stop(true);
    }
  });

  test("scontrol show hostnames expands node lists, inside a task too", async () => {
    // sinfo -o %N prints the partition's nodes as one compressed list ("wbnode[1-2]").
    const partition = await slurmExec(["sinfo", "-h", "-o", "%N"]);
    expect(partition.code).toBe(0);
    expect(await expandHostlist(partition.stdout.trim())).toEqual(NODES);
    // The hostlist grammar a TypeScript expander must match: comma lists, ranges keep zero padding,
    // several bracket groups multiply out (last one varies fastest).
    expect(await expandHostlist("node[01-03,7],gpu-a[9-10]")).toEqual(["node01", "node02", "node03", "node7", "gpu-a9", "gpu-a10"]);
    expect(await expandHostlist("rack[1-2]-n[08-09]")).toEqual(["rack1-n08", "rack1-n09", "rack2-n08", "rack2-n09"]);

    const inTask = await srun(["-Q", "-J", JOB_NAME, "-n", "1", "bash", "-c", 'scontrol show hostnames "$SLURM_STEP_NODELIST"; echo "on $SLURMD_NODENAME"']);
    expect(inTask.code).toBe(0);
    const [expanded, on] = inTask.stdout.split("\n");
    expect(NODES).toContain(expanded!);
    expect(on).toBe(`on ${expanded}`);
  });

  test("a task killed by SIGKILL: srun exits 137 and, by default, the other tasks run to the end", async () => {
    const task = `
      const rank = process.env.SLURM_PROCID;
      if (rank === "1") process.kill(process.pid, "SIGKILL");
      else setTimeout(() => console.log("rank " + rank + " finished"), 1500);`;
    const run = await srun(["-Q", "-J", JOB_NAME, "-n", "4", BUN, "-e", task]);
    expect(run.timedOut).toBe(false);
    expect(run.code).toBe(137);
    expect(run.stderr).toContain("task 1: Killed");
    expect(run.stdout.split("\n").filter(Boolean).sort()).toEqual(["rank 0 finished", "rank 2 finished", "rank 3 finished"]);
  });

  test("with --kill-on-bad-exit=1 the other tasks get SIGTERM when one is killed, and srun still exits 137", async () => {
    // Rank 1 kills itself only once the others have installed their SIGTERM handler and said so to this server.
    let ready = 0;
    const server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(req) {
        if (new URL(req.url).pathname === "/ready") ready++;
        return new Response(String(ready));
      },
    });
    try {
      const task = `
        const e = process.env;
        const base = "http://" + e.SLURM_LAUNCH_NODE_IPADDR + ":" + e.WB_TEST_PORT;
        if (e.SLURM_PROCID === "1") {
          while (Number(await (await fetch(base + "/count")).text()) < 3) await Bun.sleep(50);
          process.kill(process.pid, "SIGKILL");
        } else {
          process.on("SIGTERM", () => { console.log("rank " + e.SLURM_PROCID + " got SIGTERM"); process.exit(143); });
          await fetch(base + "/ready");
          setInterval(() => {}, 1000); // would run forever without --kill-on-bad-exit
        }`;
      const run = await srun(["-Q", "-J", JOB_NAME, "-n", "4", "--kill-on-bad-exit=1", BUN, "-e", task], {
        env: { WB_TEST_PORT: String(server.port) },
        timeoutMs: 20_000,
      });
      expect(run.timedOut).toBe(false);
      expect(run.code).toBe(137);
      expect(run.stderr).toContain("task 1: Killed");
      expect(run.stdout.split("\n").filter(Boolean).sort()).toEqual(["rank 0 got SIGTERM", "rank 2 got SIGTERM", "rank 3 got SIGTERM"]);
    } finally {
      server.stop(true);
    }
  });

  test("srun exits with the highest task exit code when no task is killed", async () => {
    const run = await srun(["-Q", "-J", JOB_NAME, "-n", "4", "bash", "-c", "exit $(( SLURM_PROCID == 2 ? 3 : 0 ))"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain("task 2: Exited with exit code 3");
  });

  test("sbatch --wait runs a 2-task script; its steps count up from 0 and the batch shell itself has no step id", async () => {
    const out = join(tmp, "job.out");
    const script = join(tmp, "job.sh");
    writeFileSync(
      script,
      [
        "#!/bin/bash",
        "#SBATCH -n 2",
        `#SBATCH -o ${out}`,
        `#SBATCH -e ${join(tmp, "job.err")}`, // srun notes such as "step creation temporarily disabled" go here
        `echo "batch procid=\${SLURM_PROCID-unset} ntasks=\${SLURM_NTASKS-unset} step=\${SLURM_STEP_ID-unset}"`,
        `srun ${BUN} ${join(tmp, "dump-env.js")}`,
        `srun ${BUN} ${join(tmp, "dump-env.js")}`,
        "",
      ].join("\n"),
    );
    const token = freshToken();
    const run = await slurmExec(["sbatch", "--wait", "--parsable", "-J", JOB_NAME, script], {
      env: { WARMBENCH_SHARD_TOKEN: token },
      cwd: tmp,
      timeoutMs: SBATCH_TIMEOUT_MS,
    });
    expect(run.code).toBe(0);
    const jobId = run.stdout.trim();
    expect(jobId).toMatch(/^[1-9]\d*$/);

    const lines = readFileSync(out, "utf8").split("\n").filter(Boolean);
    // A warmbench started in the batch shell (not under srun) sees rank 0 of 2 but no step: --shard auto must not
    // treat that as a shard.
    expect(lines[0]).toBe("batch procid=0 ntasks=2 step=unset");
    const steps = lines.slice(1).map((line) => JSON.parse(line) as TaskEnv);
    const summary = steps.map(
      (env) => `${env.SLURM_JOB_ID}.${env.SLURM_STEP_ID} ${env.SLURM_PROCID}/${env.SLURM_NTASKS} ${env.WARMBENCH_SHARD_TOKEN === token}`,
    );
    expect(summary.sort()).toEqual([`${jobId}.0 0/2 true`, `${jobId}.0 1/2 true`, `${jobId}.1 0/2 true`, `${jobId}.1 1/2 true`]);
  });

  test("sbatch --wait exits with the batch script's exit code", async () => {
    const script = join(tmp, "fail.sh");
    writeFileSync(script, `#!/bin/bash\n#SBATCH -n 2\n#SBATCH -o ${join(tmp, "fail.out")}\nsrun true\nexit 3\n`);
    const run = await slurmExec(["sbatch", "--wait", "--parsable", "-J", JOB_NAME, script], { cwd: tmp, timeoutMs: SBATCH_TIMEOUT_MS });
    expect(run.code).toBe(3);
  });
});

describeSlurm(
  "srun -N 2 over the local Slurm's nodes (the shape of a real multi-node sharded run)",
  () => {
    const nodes = slurmNodes().slice(0, 2);

    test("srun -N 2 -n 8: ranks 0..7 in blocks per node, rank 0 on the first node of a compressed SLURM_STEP_NODELIST", async () => {
      const token = freshToken();
      const run = await srun(["-Q", "-J", JOB_NAME, "-l", "-N", "2", "-n", "8", BUN, "-e", DUMP_ENV], { env: { WARMBENCH_SHARD_TOKEN: token } });
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      const tasks = parseLabeled(run.stdout);
      const ranks = [0, 1, 2, 3, 4, 5, 6, 7];
      expect([...tasks.keys()].sort()).toEqual(ranks);
      const first = tasks.get(0)!;
      const nodeList = first.SLURM_STEP_NODELIST!;
      expect(await expandHostlist(nodeList)).toEqual(nodes);
      expect(nodeList).not.toBe(nodes.join(",")); // compressed ("wbnode[1-2]"): the shard code must expand it
      expect(first.SLURMD_NODENAME).toBe(nodes[0]);

      const perNode = tasksPerNode(first.SLURM_STEP_TASKS_PER_NODE!);
      expect(perNode.length).toBe(2);
      expect(perNode.reduce((a, b) => a + b, 0)).toBe(8);
      // Block distribution: ranks fill node 0 first, then node 1, each node counting LOCALID from 0.
      const expectedNode = ranks.map((rank) => (rank < perNode[0]! ? 0 : 1));
      for (const rank of ranks) {
        const env = tasks.get(rank)!;
        const nodeId = expectedNode[rank]!;
        expect({ rank, env }).toEqual({
          rank,
          env: {
            ...first,
            SLURM_PROCID: String(rank),
            SLURM_LOCALID: String(nodeId === 0 ? rank : rank - perNode[0]!),
            SLURM_NODEID: String(nodeId),
            SLURMD_NODENAME: nodes[nodeId]!,
          },
        });
      }
      expect(first).toMatchObject({
        SLURM_NTASKS: "8",
        SLURM_STEP_NUM_TASKS: "8",
        SLURM_STEP_ID: "0",
        SLURM_LAUNCH_NODE_IPADDR: "127.0.0.1",
        WARMBENCH_SHARD_TOKEN: token,
      });
    });

    test("every rank reaches a server at the first host of SLURM_STEP_NODELIST (node names resolve)", async () => {
      const seen: string[] = [];
      const server = Bun.serve({
        hostname: "127.0.0.1",
        port: 0,
        fetch(req) {
          const url = new URL(req.url);
          seen.push(`${url.searchParams.get("rank")}@${url.searchParams.get("node")} -> ${req.headers.get("host")}`);
          return new Response("ok");
        },
      });
      try {
        const task = `
          const e = process.env;
          const hosts = Bun.spawnSync(["scontrol", "show", "hostnames", e.SLURM_STEP_NODELIST]).stdout.toString().split("\\n");
          const res = await fetch("http://" + hosts[0] + ":" + e.WB_TEST_PORT + "/?rank=" + e.SLURM_PROCID + "&node=" + e.SLURMD_NODENAME);
          if (!res.ok) process.exit(1);`;
        const run = await srun(["-Q", "-J", JOB_NAME, "-N", "2", "-n", "4", "--ntasks-per-node=2", BUN, "-e", task], {
          env: { WB_TEST_PORT: String(server.port) },
        });
        expect(run.stderr).toBe("");
        expect(run.code).toBe(0);
        const host = `${nodes[0]}:${server.port}`;
        expect(seen.sort()).toEqual([`0@${nodes[0]} -> ${host}`, `1@${nodes[0]} -> ${host}`, `2@${nodes[1]} -> ${host}`, `3@${nodes[1]} -> ${host}`]);
      } finally {
        server.stop(true);
      }
    });
  },
  { minNodes: 2 },
);

describeSlurm("after the Slurm tests", () => {
  test("nothing these tests started is left in squeue", async () => {
    expect(await waitForNoJobs(JOB_NAME)).toEqual([]);
  });
});
