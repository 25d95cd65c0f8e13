/**
 * --serve-metrics: warmbench's own Prometheus exposition (output/serve-metrics.ts) for the length of a command's run,
 * so a long run can be watched from the dashboards people already have. Listening is checked before anything is
 * sent: an address in use is one line naming the flag (exit 2).
 */
import { UsageError } from "../errors.ts";
import { log } from "../log.ts";
import { serveMetrics, type MetricsExporter } from "../output/serve-metrics.ts";

export async function withServedMetrics<T>(address: { host: string; port: number } | null | undefined, run: () => Promise<T>): Promise<T> {
  if (address === null || address === undefined) return run();
  let exporter: MetricsExporter;
  try {
    exporter = serveMetrics(address);
  } catch (err) {
    throw new UsageError(`--serve-metrics ${address.host}:${address.port}: cannot listen there (${err instanceof Error ? err.message : String(err)})`);
  }
  log.info(`Serving warmbench's metrics at ${exporter.url}/metrics`);
  try {
    return await run();
  } finally {
    await exporter.stop();
  }
}
