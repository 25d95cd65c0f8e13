/**
 * FlushedWriter's bytes are on the wire when write() returns: a reader in another process sees them while
 * this process is still busy. res.write() is the control: Bun sends its bytes only when the task ends.
 */
import { afterAll, expect, test } from "bun:test";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { FlushedWriter } from "../../../src/mock/socket-write.ts";

const epochMs = (): number => performance.timeOrigin + performance.now();
const BUSY_MS = 80;

function busyWait(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // Hold the event loop: nothing buffered can be sent until this task ends.
  }
}

/** A raw-socket reader in its own process: prints "<epoch ms> <bytes as JSON>" per received chunk. */
const READER = `
const net = require("node:net");
const sock = net.connect(Number(process.env.MOCK_PORT), "127.0.0.1");
let all = "";
sock.on("data", (b) => {
  process.stdout.write((performance.timeOrigin + performance.now()) + " " + JSON.stringify(b.toString("latin1")) + "\\n");
  all += b.toString("latin1");
  if (all.endsWith("\\r\\n0\\r\\n\\r\\n")) process.exit(0);
});
sock.write("POST /generate HTTP/1.1\\r\\nhost: x\\r\\ncontent-length: 0\\r\\n\\r\\n");
`;

let server: Server | null = null;
afterAll(() => server?.close());

test("a flushed write reaches the reader before the task ends; res.write() waits for the task's end", async () => {
  const writtenAt: Record<string, number> = {};
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
    res.flushHeaders();
    const writer = new FlushedWriter(res);
    expect(writer.isSynchronous()).toBe(true);
    setTimeout(() => {
      writer.write("data: flushed\n\n");
      writtenAt.flushed = epochMs();
      busyWait(BUSY_MS);
      writer.write(Buffer.from("data: bytes\n\n"));
      writtenAt.bytes = epochMs();
      busyWait(BUSY_MS);
      // Last: after a res.write() the socket stays corked until the task ends, flushed writes included.
      res.write("data: buffered\n\n");
      writtenAt.buffered = epochMs();
      busyWait(BUSY_MS);
      res.end();
    }, 30);
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const port = String((server.address() as AddressInfo).port);
  const reader = Bun.spawn([process.execPath, "-e", READER], { stdout: "pipe", env: { ...process.env, MOCK_PORT: port } });
  const lines = (await new Response(reader.stdout).text()).trim().split("\n");
  const arrivals = lines.map((line) => {
    const space = line.indexOf(" ");
    return { atMs: Number(line.slice(0, space)), text: JSON.parse(line.slice(space + 1)) as string };
  });
  const arrivalOf = (marker: string): number => arrivals.find((a) => a.text.includes(`data: ${marker}`))!.atMs;
  // Generous windows: the flushed writes arrive long before the 80 ms of busy work after them end.
  expect(arrivalOf("flushed") - writtenAt.flushed!).toBeLessThan(BUSY_MS / 2);
  expect(arrivalOf("bytes") - writtenAt.bytes!).toBeLessThan(BUSY_MS / 2);
  expect(arrivalOf("buffered") - writtenAt.buffered!).toBeGreaterThan(BUSY_MS / 2);
  // The chunked framing is node:http's own: the body parses as the three events and the terminator.
  const raw = arrivals.map((a) => a.text).join("");
  expect(raw.slice(raw.indexOf("\r\n\r\n") + 4)).toBe("f\r\ndata: flushed\n\n\r\nd\r\ndata: bytes\n\n\r\n10\r\ndata: buffered\n\n\r\n0\r\n\r\n");
});
