/**
 * The every-flag test's vocabulary: an entry is a command line with a flag added (or replaced) and a proof that
 * compares what it did with the same command line without it; `proofBodies` turns a table of them into test bodies.
 */
import { expect } from "bun:test";
import { existsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { detailSignature, observe, observeBase, sentSignature, withFlags, type Observation, type Probe } from "../../helpers/flag-proof.ts";

/** One test body per flag of a command. */
export type ProofBodies = Record<string, () => Promise<void>>;

/** How a flag proves itself: expectations on its observation against the base line's. */
export type Proof = (o: Observation, base: Observation) => void | Promise<void>;

export interface Entry {
  /** Flags added to (or replacing the same flags of) the command's base line. */
  args: string[];
  drop?: string[];
  server?: string[];
  /** Compared with this line instead of the base (flags added to the base). */
  vs?: string[];
  setup?: (dir: string) => void;
  /** The intercept answers the flagged line only (the base line would wait out the default). */
  intercept?: Probe["intercept"];
  flaggedOnly?: boolean;
  env?: Probe["env"];
  /** Both lines run under a pseudo-terminal (see Probe.tty). */
  tty?: boolean;
  /**
   * The condition the proof is about, where the machine decides it (a saturated client): the flagged line runs again,
   * at most three times in all, until its observation meets it. The proof itself is never relaxed.
   */
  until?: (o: Observation) => boolean;
  proof: Proof;
}

/** Each entry's body: the base line (shared with other entries where it is the same) against the flagged line. */
export function proofBodies(base: string[], entries: Record<string, Entry>): ProofBodies {
  return Object.fromEntries(
    Object.entries(entries).map(([flag, entry]) => [
      flag,
      async () => {
        const line = (extra: string[], drop: string[] = []) => withFlags(base, extra, drop);
        const probe = (args: string[], flagged: boolean): Probe => ({
          args,
          server: entry.server,
          intercept: flagged || entry.flaggedOnly !== true ? entry.intercept : undefined,
          setup: entry.setup,
          env: entry.env,
          tty: entry.tty,
        });
        const b = await observeBase(probe(entry.vs === undefined ? base : line(entry.vs), false));
        let o = await observe(probe(line(entry.args, entry.drop), true));
        for (let attempt = 1; attempt < 3 && entry.until !== undefined && !entry.until(o); attempt++) {
          o = await observe(probe(line(entry.args, entry.drop), true));
        }
        await entry.proof(o, b);
      },
    ]),
  );
}

export const sends: Proof = (o, b) => {
  expect(o.requests.length).toBeGreaterThan(0);
  expect(sentSignature(o)).not.toEqual(sentSignature(b));
};
export const exits =
  (code: number): Proof =>
  (o, b) => {
    expect(o.code).toBe(code);
    expect(b.code).not.toBe(code);
  };
export const fails: Proof = (o, b) => {
  expect(b.code).toBe(0);
  expect(o.code).not.toBe(0);
};
export const writes =
  (file: string): Proof =>
  (o) => {
    expect(existsSync(join(o.dir, file))).toBe(true);
    expect(statSync(join(o.dir, file)).size).toBeGreaterThan(0);
  };
const stderrShows =
  (re: RegExp): Proof =>
  (o, b) => {
    expect(o.stderr).toMatch(re);
    expect(b.stderr).not.toMatch(re);
  };
export const detailsDiffer: Proof = (o, b) => {
  expect(detailSignature(o).length).toBeGreaterThan(0);
  expect(detailSignature(o)).not.toEqual(detailSignature(b));
};
export const stdoutDiffers: Proof = (o, b) => {
  const mask = (s: string) => s.replace(/\d+(\.\d+)?/g, "N");
  expect(mask(o.stdout)).not.toBe(mask(b.stdout));
};

/** On an error, the stack trace: the flag's line and the base both fail on `failing`, only one says where. */
export const verboseEntry = (failing: string[]): Entry => ({ args: ["--verbose", ...failing], vs: failing, proof: stderrShows(/^\s+at /m) });

/** Where the server is: a refused address fails, and --host/--port reach the proxy only through those flags. */
export const SERVER_FLAGS: Record<"base-url" | "host" | "port", Entry> = {
  "base-url": { args: ["--base-url", "http://127.0.0.1:9"], proof: fails },
  host: { args: ["--host", "127.0.0.9", "--port", "{port}"], drop: ["--base-url"], proof: fails },
  // Nothing listens on the default port (30000) here: requests reaching the proxy are --port's doing.
  port: {
    args: ["--port", "{port}"],
    drop: ["--base-url"],
    proof: (o) => {
      expect(o.code).toBe(0);
      expect(o.requests.length).toBeGreaterThan(0);
    },
  },
};

/** Against a flush that stays busy, the default (60 s) would still be retrying when this line has given up. */
export const FLUSH_DEADLINE: Entry = {
  args: ["--flush-deadline", "0.2"],
  flaggedOnly: true,
  intercept: (r) => (r.path.startsWith("/flush_cache") ? new Response("busy", { status: 400 }) : null),
  proof: (o) => {
    expect(o.code).not.toBe(0);
    expect(o.wallMs).toBeLessThan(20_000);
    expect(o.stderr).toMatch(/flush/i);
  },
};

/** A passport file as `warmbench passport --output-file` writes it, with the figures a test names. */
function writePassport(dir: string, pageSize: number, capacityTokens: number): void {
  const figure = (value: number) => ({ value, method: "test", uncertainty: "exact", why: null });
  writeFileSync(
    join(dir, "passport.json"),
    JSON.stringify({
      kind: "warmbench-passport",
      version: 1,
      // The vLLM mock states no server version (warmbench reads none from it): neither does its passport.
      server_version: null,
      page_size_tokens: figure(pageSize),
      capacity_tokens: figure(capacityTokens),
    }),
  );
}

/** --passport against a vLLM mock, which states neither its page size (32 here) nor its capacity: the line takes the passport's. */
export const PASSPORT_ENTRY = (line: (o: Observation) => Record<string, any>): Entry => ({
  args: ["--passport", "{dir}/passport.json"],
  server: ["--personality", "vllm", "--page-size", "32"],
  setup: (dir) => writePassport(dir, 32, 9999),
  proof: (o, b) => {
    expect([line(o).page_size, line(o).cache_capacity_tokens]).toEqual([32, 9999]);
    expect([line(b).page_size, line(b).cache_capacity_tokens]).toEqual([16, null]);
  },
});

/**
 * Behind a router (--replicas): here the harness's proxy is the router and the mock its one replica, naming itself in
 * X-Served-By (--served-by-header). The line's ledger then knows every request's replica.
 */
const ROUTED = ["--replicas", "{url}", "--replica-header", "X-Served-By"];
const SERVED_BY = ["--served-by-header", "X-Served-By"];
export const ROUTER_ENTRIES = (line: (o: Observation) => Record<string, any>): Record<"replicas" | "routing-key" | "replica-header", Entry> => ({
  replicas: {
    args: ROUTED,
    server: SERVED_BY,
    proof: (o, b) => {
      expect([o.code, line(o).route, line(o).ledger_unattributed_requests]).toEqual([0, "router", 0]);
      expect(line(b).route).toBeUndefined();
    },
  },
  "routing-key": {
    args: [...ROUTED, "--routing-key", "aiperf"],
    vs: ROUTED,
    server: SERVED_BY,
    proof: (o, b) => {
      const measured = (x: Observation) => x.requests.filter((r) => r.path === "/generate");
      expect(measured(o).some((r) => r.headers["x-session-affinity"] !== undefined)).toBe(true);
      expect(measured(b).some((r) => r.headers["x-session-affinity"] !== undefined)).toBe(false);
    },
  },
  "replica-header": {
    args: ["--replicas", "{url}", "--replica-header", "X-Served-By"],
    vs: ["--replicas", "{url}", "--replica-header", "X-Other"],
    server: SERVED_BY,
    proof: (o, b) => {
      expect(line(o).ledger_unattributed_requests).toBe(0);
      expect(line(b).ledger_unattributed_requests).toBeGreaterThan(0);
    },
  },
});
