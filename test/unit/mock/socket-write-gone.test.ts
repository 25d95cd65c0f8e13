/**
 * A client that resets its connection mid-stream: the next FlushedWriter.write must drop the response, as a real
 * server drops the stream, instead of throwing "Stream is already ended" from the native handle's cork (which,
 * thrown from a token timer in the mock, was an uncaught error that failed multiturn's "SIGINT mid-run" now and then).
 */
import { afterAll, expect, test } from "bun:test";
import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { FlushedWriter } from "../../../src/mock/socket-write.ts";

const CLIENTS = 20;
let server: Server | null = null;
afterAll(() => server?.close());

test("writes to a client that has just reset drop the response and never throw", async () => {
  const outcomes: Promise<{ thrown: string | null; destroyed: boolean; writes: number }>[] = [];
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.flushHeaders();
    const writer = new FlushedWriter(res);
    expect(writer.isSynchronous()).toBe(true);
    outcomes.push(
      new Promise((resolve) => {
        let writes = 0;
        // A token every millisecond, on after the reset until "close": the writes that fall between the reset
        // reaching uWS and node:http's "close" are the ones that threw.
        const timer = setInterval(() => {
          try {
            writer.write("data: token\n\n");
            writes++;
          } catch (error) {
            clearInterval(timer);
            resolve({ thrown: (error as Error).message, destroyed: res.destroyed, writes });
          }
        }, 1);
        res.on("close", () => {
          clearInterval(timer);
          resolve({ thrown: null, destroyed: res.destroyed, writes });
        });
      }),
    );
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  for (let i = 0; i < CLIENTS; i++) {
    await new Promise<void>((resolve) => {
      const socket = net.connect(port, "127.0.0.1");
      socket.write("POST /generate HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n");
      let chunks = 0;
      socket.on("data", () => {
        if (++chunks === 2) {
          socket.resetAndDestroy();
          resolve();
        }
      });
    });
  }
  const results = await Promise.all(outcomes);
  expect(results).toHaveLength(CLIENTS);
  for (const r of results) {
    expect(r.thrown).toBeNull();
    expect(r.destroyed).toBe(true);
    expect(r.writes).toBeGreaterThanOrEqual(1);
  }
});
