/** A report's page in headless Chromium, read from the chart objects the page script made. */
import type { Browser } from "./browser.ts";

export interface DrawnChart {
  type: string;
  xType: string;
  legend: boolean;
  datasets: Array<{ label: string; data: Array<{ x: number; y: number }>; drawn: number }>;
}

/** The report's page in Chromium: every chart object as drawn, and what went wrong on the way. */
export async function openReport(html: string, b: Browser): Promise<{ charts: Record<string, DrawnChart>; problems: string[]; overflow: number; page: any }> {
  const page = await b.context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => m.type() === "error" && problems.push(`console: ${m.text()}`));
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`file://${html}`);
  await page.waitForSelector("html[data-charts-ready]", { timeout: 15_000 });
  const charts = await page.evaluate(() => {
    const all = (globalThis as any).warmbenchCharts as Record<string, any>;
    return Object.fromEntries(
      Object.entries(all).map(([id, c]) => [
        id,
        {
          type: c.config.type,
          xType: c.options.scales.x.type,
          legend: c.options.plugins.legend.display !== false,
          datasets: c.data.datasets.map((d: any, i: number) => ({ label: d.label, data: d.data, drawn: c.getDatasetMeta(i).data.length })),
        },
      ]),
    );
  });
  const overflow = await page.evaluate(() => {
    const d = (globalThis as any).document.documentElement;
    return d.scrollWidth - d.clientWidth;
  });
  return { charts, problems, overflow, page };
}
