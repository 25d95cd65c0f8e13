/** --exit-after N: the server dies once the N-th measured request is admitted, in-process and as `warmbench mock`. */
import { expect, test } from "bun:test";
import { genBody, ids, post, readRaw, start } from "./mock-http.ts";

test("in-process: sockets are cut, the listener closes, closed and stop() resolve", async () => {
  const server = await start({ exitAfter: 2, itlMs: 20 });
  const first = await post(server, genBody(ids(5), 3));
  expect((await readRaw(first)).error).toBeNull();
  const warm = await post(server, genBody(ids(5, 50), 1)); // warm requests do not count
  expect((await readRaw(warm)).error).toBeNull();
  const running = await post(server, genBody(ids(5, 90), 200), "/generate").catch((err: Error) => err);
  let streamError: string | null = null;
  if (running instanceof Response) streamError = (await readRaw(running)).error;
  else streamError = running.message;
  expect(streamError).not.toBeNull();
  await server.closed;
  expect(server.stats()).toMatchObject({ openConnections: 0, running: 0, faultsInjected: { exit: 1 } });
  const after = await fetch(server.url + "/health").catch((err: Error) => err);
  expect(after).toBeInstanceOf(Error);
  await server.stop();
});

const SRC = `${import.meta.dir}/../../../src`;
const ENTRY = `
import { runMockServer } from ${JSON.stringify(`${SRC}/mock/main.ts`)};
import { parseMockOptions } from ${JSON.stringify(`${SRC}/mock/options.ts`)};
await runMockServer(parseMockOptions({ port: "0", "exit-after": "1", "itl-ms": "10" }));
`;

test("as a process: exits with code 0 after the N-th measured request", async () => {
  const child = Bun.spawn([process.execPath, "-e", ENTRY], { stdout: "pipe", stderr: "pipe" });
  try {
    const reader = child.stderr.getReader();
    let text = "";
    while (!text.includes("\n")) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += new TextDecoder().decode(chunk.value);
    }
    const url = /listening on (\S+)/.exec(text)?.[1];
    expect(url).toBeDefined();
    const res = await fetch(`${url}/generate`, { method: "POST", body: JSON.stringify(genBody(ids(5), 100)) }).catch((err: Error) => err);
    if (res instanceof Response) expect((await readRaw(res)).error).not.toBeNull();
    expect(await child.exited).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
