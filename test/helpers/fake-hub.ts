/**
 * A stand-in for the Hugging Face hub on 127.0.0.1: serves `/{repo}/resolve/{revision}/{file}` from an
 * in-memory map keyed "{repo}/{file}" (e.g. "org/name/tokenizer.json"), with an x-repo-commit header,
 * and records every request's headers so tests can check what was (and was not) sent.
 */

/** One request as the fake hub saw it. */
interface FakeHubRequest {
  method: string;
  /** Decoded path, e.g. "/org/name/resolve/main/tokenizer.json". */
  path: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
}

export interface FakeHubOptions {
  /** Commit hash sent in x-repo-commit; a fixed 40-hex value by default. */
  commit?: string;
  /** Send no x-repo-commit header at all. */
  omitCommitHeader?: boolean;
  /** Only these revisions exist (others 404); any revision by default. */
  revisions?: string[];
  /** Answer every resolve request with this status and no body (e.g. 401, 500). */
  status?: number;
  /**
   * Answer resolve requests with a 302 to /cdn/{repo}/{file} (served without x-repo-commit), like LFS files
   * on the real hub: true redirects to this server, a base URL to another fake hub (another origin).
   */
  redirectToCdn?: boolean | string;
}

export interface FakeHub {
  /** Base URL without a trailing slash, for HF_ENDPOINT. */
  url: string;
  requests: FakeHubRequest[];
  stop(): Promise<void>;
}

export const FAKE_COMMIT = "0123456789abcdef0123456789abcdef01234567";

const RESOLVE_PATH = /^\/(.+)\/resolve\/([^/]+)\/([^/]+)$/;

/** Starts the fake hub on 127.0.0.1, port 0. */
export function startFakeHub(files: Record<string, Uint8Array | string>, opts: FakeHubOptions = {}): FakeHub {
  const commit = opts.commit ?? FAKE_COMMIT;
  const requests: FakeHubRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(req) {
      const url = new URL(req.url);
      const path = decodeURIComponent(url.pathname);
      requests.push({ method: req.method, path, headers: Object.fromEntries(req.headers.entries()) });
      if (url.pathname.startsWith("/cdn/")) {
        const body = files[path.slice("/cdn/".length)];
        return body === undefined ? new Response("not found", { status: 404 }) : new Response(body);
      }
      const match = RESOLVE_PATH.exec(url.pathname);
      if (!match) return new Response("not found", { status: 404 });
      const [, repo, revision, file] = match.map((part) => decodeURIComponent(part));
      const headers: Record<string, string> = opts.omitCommitHeader ? {} : { "x-repo-commit": commit };
      if (opts.status !== undefined) return new Response(null, { status: opts.status, headers });
      const body = files[`${repo}/${file}`];
      if (body === undefined || (opts.revisions && !opts.revisions.includes(revision!))) {
        return new Response("Entry not found", { status: 404, headers: { ...headers, "x-error-code": "EntryNotFound" } });
      }
      if (opts.redirectToCdn) {
        const base = typeof opts.redirectToCdn === "string" ? opts.redirectToCdn : "";
        return new Response(null, { status: 302, headers: { ...headers, location: `${base}/cdn/${repo}/${file}` } });
      }
      return new Response(body, { headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    requests,
    stop: async () => {
      await server.stop(true);
    },
  };
}
