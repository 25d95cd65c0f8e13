/** Engine detection (--backend auto) against the mock's personalities and hand-made servers. */
import { afterEach, describe, expect, test } from "bun:test";
import { detectEngine } from "../../../src/backends/detect.ts";
import { resolveBackend } from "../../../src/backends/index.ts";
import { BenchError } from "../../../src/errors.ts";
import { mockOptions, type MockOptions } from "../../../src/mock/options.ts";
import { startMockServer, type MockServer } from "../../../src/mock/server.ts";
import { startRecordingProxy, type RecordingProxy } from "../../helpers/recording-proxy.ts";

const mocks: MockServer[] = [];
const proxies: RecordingProxy[] = [];
const stubs: Array<{ stop(force?: boolean): void }> = [];
afterEach(async () => {
  for (const p of proxies.splice(0)) await p.stop();
  for (const s of stubs.splice(0)) s.stop(true);
  await Promise.all(mocks.splice(0).map((m) => m.stop()));
});

async function mock(overrides: Partial<MockOptions>): Promise<MockServer> {
  const m = await startMockServer(mockOptions({ port: 0, ...overrides }));
  mocks.push(m);
  return m;
}

/** A server answering every path with `answer(path)`. */
function stub(answer: (path: string) => Response): string {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (req) => answer(new URL(req.url).pathname) });
  stubs.push(server);
  return `http://127.0.0.1:${server.port}`;
}

const ctl = (baseUrl: string) => ({ baseUrl, headers: {} });

describe("detectEngine", () => {
  test("SGLang: /server_info, then GET /generate 405; exactly the requests --backend sglang's preflight sends", async () => {
    const m = await mock({});
    const proxy = startRecordingProxy(m.url);
    proxies.push(proxy);
    const found = await detectEngine(ctl(proxy.url));
    expect(found.engine.engine).toBe("sglang");
    expect(found.evidence).toBe("GET /generate answered 405, /server_info version 0.5.17-mock");
    expect(found.known.generateRouteChecked).toBe(true);
    expect(found.known.info?.pageSize).toBe(1);
    expect(proxy.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /server_info", "GET /generate"]);

    // The SGLang preflight then asks nothing again.
    const resolved = await resolveBackend(ctl(proxy.url), "auto", "auto");
    const before = proxy.requests.length;
    const profile = await resolved.backend.preflight(ctl(proxy.url), { pageSize: null, servedModelName: null, known: resolved.known });
    expect(proxy.requests.length).toBe(before);
    expect(resolved.backend.name).toBe("sglang");
    expect(resolved.backend.generatePath).toBe("/generate");
    expect(profile.textMode).toBe("cumulative");
  });

  test("vLLM: no /generate, no /props, GET /version", async () => {
    const found = await detectEngine(ctl((await mock({ personality: "vllm" })).url));
    expect(found.engine.name).toBe("vllm");
    expect(found.evidence).toBe("GET /version answered 0.11.0-mock");
  });

  test("llama.cpp: GET /props with total_slots; the props are handed to its preflight", async () => {
    const found = await detectEngine(ctl((await mock({ personality: "llamacpp", slots: 3 })).url));
    expect(found.engine.name).toBe("llamacpp");
    expect(found.evidence).toBe("GET /props lists 3 slot(s), build b1-mock");
    expect(found.known.props?.total_slots).toBe(3);
  });

  test("any other OpenAI-compatible server: /v1/models alone", async () => {
    const found = await detectEngine(ctl((await mock({ personality: "openai" })).url));
    expect(found.engine.name).toBe("openai");
  });

  test("SGLang's /server_info without /generate: the error --backend sglang gives", async () => {
    const m = await mock({ noGenerate: true });
    await expect(detectEngine(ctl(m.url))).rejects.toThrow(
      `${m.url}/generate answered 404: this does not look like an SGLang server (check --base-url/--port)`,
    );
  });

  test("nothing answers: one line naming every engine's endpoint", async () => {
    const url = stub(() => Response.json({ detail: "Not Found" }, { status: 404 }));
    const err = await detectEngine(ctl(url)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BenchError);
    expect((err as Error).message).toBe(
      `${url}/generate answered 404: this does not look like an SGLang server, nor like llama.cpp (no /props), ` +
        "vLLM (no /version) or an OpenAI-compatible server (/v1/models answered 404) (check --base-url/--port)",
    );
  });

  test("everything behind a key (401): SGLang, as --backend sglang would have run", async () => {
    const url = stub(() => Response.json({ error: "Unauthorized" }, { status: 401 }));
    const found = await detectEngine(ctl(url));
    expect(found.engine.name).toBe("sglang");
    expect(found.evidence).toBe("GET /generate answered 401; nothing else answered");
  });

  test("a vLLM dev-mode /server_info is not SGLang's", async () => {
    const url = stub((path) =>
      path === "/server_info"
        ? Response.json({ vllm_config: "..." })
        : path === "/version"
          ? Response.json({ version: "0.12.0" })
          : new Response("", { status: 404 }),
    );
    expect((await detectEngine(ctl(url))).engine.name).toBe("vllm");
  });
});

describe("resolveBackend", () => {
  test("a named backend asks nothing", async () => {
    const resolved = await resolveBackend(ctl("http://127.0.0.1:9"), "llamacpp", "chat");
    expect(resolved.engine).toEqual({ source: "flag", evidence: "--backend llamacpp" });
    expect(resolved.backend).toMatchObject({ name: "llamacpp", endpoint: "chat", generatePath: "/v1/chat/completions", freshConnections: true });
  });

  test("auto + chat on SGLang: its OpenAI chat endpoint with SGLang's flush", async () => {
    const m = await mock({});
    const resolved = await resolveBackend(ctl(m.url), "auto", "chat");
    expect(resolved.engine.source).toBe("detected");
    expect(resolved.backend).toMatchObject({ name: "sglang", engine: "sglang", generatePath: "/v1/chat/completions", promptEncoding: "text" });
  });

  test("auto + generate on llama.cpp: refused, naming what was found", async () => {
    const m = await mock({ personality: "llamacpp" });
    await expect(resolveBackend(ctl(m.url), "auto", "generate")).rejects.toThrow(
      "--endpoint generate: the server is llama.cpp (GET /props lists 4 slot(s), build b1-mock), and llama.cpp has no SGLang-native /generate endpoint",
    );
  });
});
