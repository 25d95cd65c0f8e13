/** runMockServer in a child process: one "listening" line on stderr, serves, exits 0 on SIGTERM/SIGINT. */
import { expect, test } from "bun:test";

const SRC = `${import.meta.dir}/../../../src`;
const ENTRY = `
import { runMockServer } from ${JSON.stringify(`${SRC}/mock/main.ts`)};
import { mockOptions } from ${JSON.stringify(`${SRC}/mock/options.ts`)};
await runMockServer(mockOptions({ port: 0, modelName: "child" }));
`;

async function firstStderrLine(stream: ReadableStream<Uint8Array>): Promise<{ line: string; rest: Promise<string> }> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while (!text.includes("\n")) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  const rest = (async () => {
    let more = text;
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) more += decoder.decode(chunk.value, { stream: true });
    return more;
  })();
  return { line: text.split("\n")[0]!, rest };
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`prints one line, serves, and exits 0 on ${signal}`, async () => {
    const child = Bun.spawn([process.execPath, "-e", ENTRY], { stdout: "pipe", stderr: "pipe" });
    try {
      const { line, rest } = await firstStderrLine(child.stderr);
      const match = /^warmbench mock listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
      expect(match).not.toBeNull();
      const info = (await (await fetch(`${match![1]}/model_info`)).json()) as { model_path: string };
      expect(info.model_path).toBe("child");
      child.kill(signal);
      expect(await child.exited).toBe(0);
      expect((await rest).trim()).toBe(line);
      expect(await new Response(child.stdout).text()).toBe("");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
}
