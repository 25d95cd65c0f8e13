/**
 * A real router for the replicas tests: Debian's nginx (provisioned by the test command), started by the test on a
 * free port with its own configuration, in front of upstream servers: `hash $http_<key> consistent` (a consistent hash
 * of the session key a client sends), the chosen upstream named in `X-Served-By: $upstream_addr`, streaming answers
 * passed on unbuffered. Stopped (and its files removed) by the test.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface NginxRouter {
  url: string;
  stop(): Promise<void>;
}

export const nginxPath = (): string | null => Bun.which("nginx") ?? (Bun.file("/usr/sbin/nginx").size > 0 ? "/usr/sbin/nginx" : null);

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

/** `keyHeader`: the request header the hash reads (e.g. X-Session-Affinity). */
export async function startNginxRouter(upstreams: readonly string[], keyHeader: string): Promise<NginxRouter> {
  const nginx = nginxPath();
  if (nginx === null) throw new Error("nginx is not installed (the test command provisions Debian's nginx-light as root)");
  const dir = mkdtempSync(join(tmpdir(), "warmbench-nginx-"));
  const port = await freePort();
  const variable = `$http_${keyHeader.toLowerCase().replaceAll("-", "_")}`;
  writeFileSync(
    join(dir, "nginx.conf"),
    `
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 256; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  upstream replicas {
    hash ${variable} consistent;
${upstreams.map((u) => `    server ${new URL(u).host};`).join("\n")}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://replicas;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      proxy_read_timeout 600s;
      add_header X-Served-By $upstream_addr always;
    }
  }
}
`,
  );
  const proc = Bun.spawn([nginx, "-p", dir, "-c", join(dir, "nginx.conf"), "-g", "daemon off; user root;"], {
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (proc.exitCode !== null) throw new Error(`nginx exited ${proc.exitCode}: ${await new Response(proc.stderr).text()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(500) });
      break;
    } catch {
      await Bun.sleep(50);
    }
  }
  return {
    url,
    async stop() {
      proc.kill();
      await proc.exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
