/**
 * A real Prometheus for the --serve-metrics test: Debian's `prometheus` (provisioned by the test command), started by
 * the test on a free loopback port with a scrape configuration pointing at one target, its data in a temporary
 * directory; queried through its HTTP API. Stopped (and its files removed) by the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface PrometheusServer {
  url: string;
  /** An instant query's single value; null while it has none. */
  value(query: string): Promise<number | null>;
  stop(): Promise<void>;
}

export const prometheusPath = (): string | null => Bun.which("prometheus") ?? (Bun.file("/usr/bin/prometheus").size > 0 ? "/usr/bin/prometheus" : null);

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Scrapes `target` (host:port) every `intervalS` seconds. */
export async function startPrometheus(target: string, intervalS = 1): Promise<PrometheusServer> {
  const bin = prometheusPath();
  if (bin === null) throw new Error("prometheus is not installed (the test command provisions Debian's prometheus as root)");
  const dir = mkdtempSync(join(tmpdir(), "warmbench-prometheus-"));
  const port = await freePort();
  writeFileSync(
    join(dir, "prometheus.yml"),
    `global:\n  scrape_interval: ${intervalS}s\n  evaluation_interval: ${intervalS}s\nscrape_configs:\n  - job_name: warmbench\n    static_configs:\n      - targets: ["${target}"]\n`,
  );
  const proc = Bun.spawn(
    [bin, `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`],
    { stdout: "ignore", stderr: "pipe" },
  );
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    proc.kill();
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = performance.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/-/ready`)).ok) break;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline || proc.exitCode !== null) {
      const err = await new Response(proc.stderr).text();
      await stop();
      throw new Error(`prometheus did not start: ${err.slice(-2000)}`);
    }
    await Bun.sleep(100);
  }
  return {
    url,
    async value(query) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(query)}`);
      const body = (await res.json()) as { data?: { result?: { value: [number, string] }[] } };
      const first = body.data?.result?.[0];
      return first === undefined ? null : Number(first.value[1]);
    },
    stop,
  };
}
