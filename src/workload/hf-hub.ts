/**
 * Hugging Face Hub tokenizer files: read from the local HF cache, else download into it.
 * The cache layout is huggingface_hub's (models--ORG--NAME/refs/<revision> holds a commit hash,
 * snapshots/<hash>/<file> the file), so Python tools and this one share downloads both ways.
 */
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { BenchError, UsageError } from "../errors.ts";
import { deadlineSignal, interruptedError } from "../interrupt.ts";
import { log } from "../log.ts";

/** Environment the hub code reads; process.env unless a test passes its own. */
export type HubEnv = Record<string, string | undefined>;

const HF_DEFAULT_ENDPOINT = "https://huggingface.co";
export const TOKENIZER_FILE = "tokenizer.json";
export const TOKENIZER_CONFIG_FILE = "tokenizer_config.json";
/** Whole download of one file, headers and body. */
const DOWNLOAD_TIMEOUT_MS = 120_000;
const MAX_REDIRECTS = 5;
const COMMIT_HASH = /^[0-9a-f]{40}$/;
const isSnapshotName = (s: string): boolean => /^[0-9A-Za-z._-]+$/.test(s) && s !== "." && s !== "..";
const REPO_PART = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** True for `name` or `org/name` with the characters and rules huggingface_hub's validate_repo_id allows. */
export function isHfRepoId(spec: string): boolean {
  if (spec.length === 0 || spec.length > 96 || spec.includes("--") || spec.includes("..")) return false;
  const parts = spec.split("/");
  if (parts.length > 2) return false;
  return parts.every((p) => REPO_PART.test(p) && !p.endsWith(".") && !p.endsWith("-"));
}

const isTrue = (v: string | undefined): boolean => ["1", "ON", "YES", "TRUE"].includes((v ?? "").toUpperCase());

/** The hub cache root as huggingface_hub picks it: HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub. */
/**
 * The hub token as huggingface_hub finds it: HF_TOKEN, else the file `huggingface-cli login` wrote
 * (HF_TOKEN_PATH, else HF_HOME/token, else ~/.cache/huggingface/token).
 */
export function hfToken(env: HubEnv): string | undefined {
  if (env.HF_TOKEN) return env.HF_TOKEN;
  const home = env.HF_HOME || join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache"), "huggingface");
  try {
    const token = readFileSync(env.HF_TOKEN_PATH || join(home, "token"), "utf8").trim();
    return token || undefined;
  } catch {
    return undefined;
  }
}

export function hfCacheDir(env: HubEnv): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  if (env.HF_HOME) return join(env.HF_HOME, "hub");
  const cacheHome = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(cacheHome, "huggingface", "hub");
}

/** models--ORG--NAME under the cache root. */
export const repoCacheDir = (cacheDir: string, repo: string): string => join(cacheDir, `models--${repo.split("/").join("--")}`);

const isFile = async (path: string): Promise<boolean> => {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
};

/** Path of a cached file for repo@revision, or null: via refs/<revision>, or snapshots/<revision> for a commit hash. */
async function findCachedFile(cacheDir: string, repo: string, revision: string, filename: string): Promise<string | null> {
  const repoDir = repoCacheDir(cacheDir, repo);
  const hashes: string[] = [];
  try {
    hashes.push((await readFile(join(repoDir, "refs", revision), "utf8")).trim());
  } catch {
    // No ref for this revision: only a literal commit hash can still be found.
  }
  if (COMMIT_HASH.test(revision)) hashes.push(revision);
  for (const hash of hashes) {
    if (!isSnapshotName(hash)) continue;
    const candidate = join(repoDir, "snapshots", hash, filename);
    if (await isFile(candidate)) return candidate;
  }
  return null;
}

/** Writes via a temp file in the same directory and a rename, so no reader ever sees half a file. */
async function writeFileAtomic(path: string, data: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.incomplete`;
  try {
    await Bun.write(tmp, data);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

interface HubRequest {
  endpoint: string;
  repo: string;
  revision: string;
  filename: string;
  token: string | undefined;
  /** The run's interrupt. */
  signal: AbortSignal | undefined;
}

type HubResponse = { status: number; commit: string | null; body: Uint8Array | null };

/**
 * GETs one file, following redirects by hand: the commit hash is on the hub's first response, and
 * large files redirect to a CDN whose response lacks it. The token is only sent to the hub's own origin.
 */
async function fetchHubFile(req: HubRequest): Promise<HubResponse> {
  const { endpoint, repo, revision, filename, token } = req;
  let url = new URL(`${endpoint}/${repo}/resolve/${encodeURIComponent(revision)}/${filename}`);
  const hubOrigin = url.origin;
  const signal = deadlineSignal(req.signal, DOWNLOAD_TIMEOUT_MS);
  let commit: string | null = null;
  try {
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const headers: Record<string, string> = { "user-agent": "warmbench" };
      if (token && url.origin === hubOrigin) headers.authorization = `Bearer ${token}`;
      const res = await fetch(url, { headers, redirect: "manual", signal });
      commit ??= res.headers.get("x-repo-commit");
      const location = res.headers.get("location");
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        url = new URL(location, url);
        continue;
      }
      if (res.status !== 200) {
        await res.body?.cancel();
        return { status: res.status, commit, body: null };
      }
      return { status: 200, commit, body: new Uint8Array(await res.arrayBuffer()) };
    }
  } catch (err) {
    if (req.signal?.aborted) throw interruptedError(`while downloading ${filename} of "${repo}"`);
    const reason = (err as Error).name === "TimeoutError" ? `timed out after ${DOWNLOAD_TIMEOUT_MS / 1000} s` : (err as Error).message;
    throw new BenchError(`cannot download ${filename} of "${repo}" from the Hugging Face hub at ${endpoint}: ${reason}`);
  }
  throw new BenchError(`downloading ${filename} of "${repo}" from ${endpoint}: more than ${MAX_REDIRECTS} redirects`);
}

function hubStatusError(req: HubRequest, status: number): Error {
  const { endpoint, repo, revision, filename } = req;
  if (status === 404) {
    return new UsageError(`no ${filename} in repo "${repo}" at revision "${revision}" (HTTP 404 from ${endpoint})`);
  }
  if (status === 401 || status === 403) {
    const hint = req.token ? "HF_TOKEN does not grant access to it" : "set HF_TOKEN for a gated or private repo";
    return new UsageError(`the Hugging Face hub at ${endpoint} refused ${filename} of "${repo}" (HTTP ${status}): ${hint}`);
  }
  return new BenchError(`the Hugging Face hub at ${endpoint} answered HTTP ${status} for ${filename} of "${repo}" at revision "${revision}"`);
}

/** Downloads tokenizer.json (required) and tokenizer_config.json (optional) into the cache; returns the tokenizer.json path. */
async function downloadTokenizer(cacheDir: string, repo: string, revision: string, env: HubEnv, signal?: AbortSignal): Promise<string> {
  const endpoint = (env.HF_ENDPOINT || HF_DEFAULT_ENDPOINT).replace(/\/+$/, "");
  const base = { endpoint, repo, revision, token: hfToken(env), signal };
  log.info(`downloading ${TOKENIZER_FILE} of ${repo}@${revision} from ${endpoint}`);
  const main = await fetchHubFile({ ...base, filename: TOKENIZER_FILE });
  if (main.status !== 200 || main.body === null) throw hubStatusError({ ...base, filename: TOKENIZER_FILE }, main.status);
  // Without an x-repo-commit header the revision names the snapshot, made safe as one path segment.
  const commit = main.commit && isSnapshotName(main.commit) ? main.commit : revision.replace(/[^0-9A-Za-z._-]/g, "_");
  const snapshotDir = join(repoCacheDir(cacheDir, repo), "snapshots", commit);
  const tokenizerPath = join(snapshotDir, TOKENIZER_FILE);
  await writeFileAtomic(tokenizerPath, main.body);

  try {
    const config = await fetchHubFile({ ...base, filename: TOKENIZER_CONFIG_FILE });
    if (config.status === 200 && config.body !== null) {
      await writeFileAtomic(join(snapshotDir, TOKENIZER_CONFIG_FILE), config.body);
    } else if (config.status !== 404) {
      log.warn(`${TOKENIZER_CONFIG_FILE} of ${repo}: HTTP ${config.status}; going on without it`);
    }
  } catch (err) {
    if (signal?.aborted) throw err;
    log.warn(`${TOKENIZER_CONFIG_FILE} of ${repo}: ${(err as Error).message}; going on without it`);
  }
  // The ref goes last, so it never points at a snapshot whose files are not there yet.
  if (commit !== revision || !COMMIT_HASH.test(commit)) await writeFileAtomic(join(repoCacheDir(cacheDir, repo), "refs", revision), commit);
  return tokenizerPath;
}

/** tokenizer.json of a hub repo at a revision: from the local HF cache, else downloaded into it (unless offline). */
export async function resolveHubTokenizer(repo: string, revision: string, env: HubEnv, signal?: AbortSignal): Promise<string> {
  if (revision === "" || revision.startsWith("/") || revision.split("/").some((p) => p === ".." || p === ".")) {
    throw new UsageError(`invalid Hugging Face revision "${revision}"`);
  }
  const cacheDir = hfCacheDir(env);
  const cached = await findCachedFile(cacheDir, repo, revision, TOKENIZER_FILE);
  if (cached !== null) return cached;
  if (isTrue(env.HF_HUB_OFFLINE)) {
    throw new UsageError(`tokenizer "${repo}" is not in the Hugging Face cache (${cacheDir}) and HF_HUB_OFFLINE=${env.HF_HUB_OFFLINE} forbids downloading it`);
  }
  return downloadTokenizer(cacheDir, repo, revision, env, signal);
}
