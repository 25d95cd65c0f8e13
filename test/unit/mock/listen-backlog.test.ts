/** raiseListenBacklog (src/mock/listen-backlog.ts): sets the backlog of this process's listener, and never throws. */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { raiseListenBacklog } from "../../../src/mock/listen-backlog.ts";

async function listening(host: string): Promise<{ server: Server; port: number }> {
  const server = createServer(() => {});
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Whether this host can listen on ::1 (a container may have IPv6 off). */
async function ipv6Loopback(): Promise<boolean> {
  const server = createServer(() => {});
  const ok = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(0, "::1", () => resolve(true));
  });
  if (ok) server.close();
  return ok;
}
const IPV6 = await ipv6Loopback();

describe.skipIf(process.platform !== "linux")("raiseListenBacklog", () => {
  const somaxconn = Number(readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim());

  for (const host of ["127.0.0.1", "::1"]) {
    test.skipIf(host === "::1" && !IPV6)(`sets the backlog of a listener on ${host} (capped by somaxconn)`, async () => {
      const { server, port } = await listening(host);
      try {
        expect(raiseListenBacklog(port, 4096)).toEqual({ backlog: Math.min(4096, somaxconn), cappedBy: somaxconn < 4096 ? somaxconn : null });
        expect(raiseListenBacklog(port, somaxconn + 1)).toEqual({ backlog: somaxconn, cappedBy: somaxconn });
      } finally {
        server.close();
      }
    });
  }

  test("a port this process does not listen on: null and why, no throw", async () => {
    const { server, port } = await listening("127.0.0.1");
    server.close();
    await new Promise((resolve) => server.once("close", resolve));
    const r = raiseListenBacklog(port, 4096);
    expect(r.backlog).toBeNull();
    expect(r).toMatchObject({ reason: expect.stringContaining(`port ${port}`) });
  });
});
