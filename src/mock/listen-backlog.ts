/**
 * Raises the mock's listen backlog after it is listening (issue 37). Bun 1.4.5's node:http ignores listen()'s
 * `backlog` and Bun.serve has no such option, so the listener keeps Bun's 512: past 512 connections at once the
 * kernel drops the surplus SYNs and those clients retry a second later, so a bench of 4096 streams measured the
 * retry. Linux lets listen() be called again on a listening socket and takes its new backlog (capped by
 * net.core.somaxconn), so this finds the listener's fd (its inode in /proc/net/tcp{,6}, matched against
 * /proc/self/fd) and calls libc's listen(fd, backlog) through bun:ffi. Elsewhere, or when anything is missing, it
 * says why and changes nothing: it never throws, and the mock starts either way.
 */
import { dlopen, FFIType } from "bun:ffi";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** What raiseListenBacklog did: the backlog now set (`cappedBy`: somaxconn, when it is below the asked one), or why not. */
export type BacklogResult = { backlog: number; cappedBy: number | null } | { backlog: null; reason: string };

/** The TCP state LISTEN in /proc/net/tcp's `st` column. */
const TCP_LISTEN = "0A";

/** Sets the backlog of this process's TCP listener on `port` to `backlog` (at most somaxconn); Linux only. */
export function raiseListenBacklog(port: number, backlog: number): BacklogResult {
  if (process.platform !== "linux") return { backlog: null, reason: `not Linux (${process.platform})` };
  try {
    const inodes = listenerInodes(port);
    if (inodes.size === 0) return { backlog: null, reason: `no listening socket on port ${port} in /proc/net/tcp` };
    const fd = fdOfSocket(inodes);
    if (fd === null) return { backlog: null, reason: `the listener on port ${port} is not among this process's fds` };
    const max = somaxconn();
    const value = max !== null && max < backlog ? max : backlog;
    const listen = libcListen();
    if (typeof listen === "string") return { backlog: null, reason: listen };
    if (listen(fd, value) !== 0) return { backlog: null, reason: `listen(${fd}, ${value}) failed` };
    return { backlog: value, cappedBy: value < backlog ? value : null };
  } catch (err) {
    return { backlog: null, reason: (err as Error)?.message ?? String(err) };
  }
}

/** Inodes of the LISTEN sockets on `port` in /proc/net/tcp and tcp6 (local address "HEX_IP:HEX_PORT"). */
function listenerInodes(port: number): Set<string> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue; // no IPv6 (or no /proc): the other table may still hold it
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10 || cols[3] !== TCP_LISTEN) continue;
      if (cols[1]!.slice(cols[1]!.lastIndexOf(":") + 1) === hexPort && cols[9] !== "0") inodes.add(cols[9]!);
    }
  }
  return inodes;
}

/** The fd of this process whose link is `socket:[inode]` for one of `inodes`, or null. */
function fdOfSocket(inodes: Set<string>): number | null {
  for (const name of readdirSync("/proc/self/fd")) {
    let link: string;
    try {
      link = readlinkSync(`/proc/self/fd/${name}`);
    } catch {
      continue; // closed since the listing (readdir's own fd, for one)
    }
    const match = /^socket:\[(\d+)\]$/.exec(link);
    if (match && inodes.has(match[1]!)) return Number(name);
  }
  return null;
}

/** net.core.somaxconn, the kernel's cap on any backlog; null when unreadable. */
function somaxconn(): number | null {
  try {
    const value = Number.parseInt(readFileSync("/proc/sys/net/core/somaxconn", "utf8").trim(), 10);
    return Number.isFinite(value) && value > 0 ? value : null;
  } catch {
    return null;
  }
}

/** libc's listen(2) through bun:ffi (opened once, kept open), or why it is not there (e.g. musl: no libc.so.6). */
let listenFn: ((fd: number, backlog: number) => number) | null = null;
function libcListen(): ((fd: number, backlog: number) => number) | string {
  if (listenFn !== null) return listenFn;
  try {
    const libc = dlopen("libc.so.6", { listen: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 } });
    listenFn = (fd, backlog) => libc.symbols.listen(fd, backlog) as number;
    return listenFn;
  } catch (err) {
    return `no libc listen() through bun:ffi (${(err as Error)?.message ?? String(err)})`;
  }
}
