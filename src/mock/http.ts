/** Small node:http helpers for the mock: whole-body reads and whole-object replies. */
import type { IncomingMessage, ServerResponse } from "node:http";

/** Bodies beyond this are refused; a 131k-token prompt as JSON is about 1 MB. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Read the whole request body as UTF-8; rejects when it is too large or the client goes away. */
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`request body over ${MAX_BODY_BYTES} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
    req.on("aborted", () => reject(new Error("client aborted the upload")));
  });
}

/** Reply with a JSON object (compact, like orjson). */
export function sendJson(res: ServerResponse, status: number, payload: unknown): void {
  const body = JSON.stringify(payload);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

/** Reply with plain text (flush_cache's messages). */
export function sendText(res: ServerResponse, status: number, text: string): void {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** Reply 200 with an empty body (/health). */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, { "content-length": 0 });
  res.end();
}

/** SGLang's 400 for a body that fails validation (its handler overrides FastAPI's 422). */
export function sendBadRequest(res: ServerResponse, message: string): void {
  sendJson(res, 400, { object: "error", message, type: "Bad Request", param: null, code: 400 });
}

/** Counts a /generate or /v1/completions request as in flight until its response closes (for GET /mock/stats). */
export function trackInFlight(res: ServerResponse, counters: { inFlight: number; maxInFlight: number }): void {
  counters.inFlight++;
  counters.maxInFlight = Math.max(counters.maxInFlight, counters.inFlight);
  res.on("close", () => counters.inFlight--);
}
