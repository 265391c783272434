// Serve mode as a user runs it: the built out/main/server.js on port 0 with a fresh data dir.
import { execFile } from "node:child_process";
import { request } from "node:http";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pino } from "pino";
import { Store } from "../../server/store/index.js";
import { REPO_ROOT, SERVER_ENTRY, serve, type Served } from "../helpers/serve.js";

let served: Served;
let dataDir: string;

function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path: "/", headers, setHost: !("Host" in headers) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sb-serve-"));
  // How fast it starts is measured by bench/cold-start.ts, not asserted here: a busy machine is no failure.
  served = await serve({ args: ["--data-dir", dataDir], timeoutMs: 30_000 });
});

afterAll(async () => {
  await served.stop();
  await rm(dataDir, { recursive: true, force: true });
});

describe("serve mode", () => {
  it("starts on a random port and serves the built renderer", async () => {
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const res = await fetch(`${served.url}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    const html = await res.text();
    expect(html).toContain('id="root"');
    const script = /src="\.?(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const js = await fetch(`${served.url}${script ?? ""}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toContain("javascript");
  });

  it("prints the URL and the demo logins", () => {
    expect(served.output()).toContain(`Switchboard is serving ${served.url}`);
    expect(served.output()).toMatch(/demo account "demo", password "switchboard" for users: admin, agent1, agent2, agent3, supervisor/);
  });

  it("refuses a forged Host with 421 and a foreign Origin with 403", async () => {
    expect(await rawGet(served.url, { Host: "rebind.example:80" })).toBe(421);
    expect(await rawGet(served.url, { Origin: "http://evil.example" })).toBe(403);
    expect(await rawGet(served.url, { Origin: served.url })).toBe(200);
  });

  it("seeded the demo data, and stops cleanly on SIGTERM with everything flushed", async () => {
    await served.stop();
    const files = await readdir(dataDir, { recursive: true });
    expect(files).not.toContain("switchboard.lock");
    // Flushed: the collection file itself holds every document (the journal kept beside it is
    // only the way back from the last good copy, should the file be damaged).
    const accounts = JSON.parse(await readFile(join(dataDir, "accounts.json"), "utf8")) as { docs: { data: { name?: string } }[] };
    expect(accounts.docs.map((d) => d.data.name)).toContain("demo");
    const store = await Store.open({ dir: dataDir });
    const demo = (await store.global("accounts")).all().find((a) => a.data.name === "demo");
    expect(demo).toBeDefined();
    const users = (await store.account(demo?.id ?? "", "users")).all().map((u) => u.data.username);
    expect(users.sort()).toEqual(["admin", "agent1", "agent2", "agent3", "supervisor"]);
    expect((await store.account(demo?.id ?? "", "devices")).size).toBe(5);
    await store.close();
  });
});

describe("serve mode options", () => {
  it("--help prints every flag and exits 0 without starting a server", async () => {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = execFile(process.execPath, [SERVER_ENTRY, "--help"], { cwd: REPO_ROOT, timeout: 10_000 }, (_err, out, err) =>
        resolve({ code: child.exitCode, stdout: out, stderr: err }),
      );
    });
    expect(stderr).toBe("");
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: /);
    for (const flag of ["--port", "--events-port", "--host", "--data-dir", "--no-demo", "--allow-origin", "--log-level", "--token-ttl", "--media-workers", "--assets-dir", "--renderer-dir", "--help"]) {
      expect(stdout).toContain(flag);
    }
    expect(stdout).not.toContain("Switchboard is serving");
  });

  it("--no-demo starts empty", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sb-serve-empty-"));
    const empty = await serve({ args: ["--data-dir", dir, "--no-demo"] });
    try {
      expect(empty.output()).not.toContain("demo account");
    } finally {
      await empty.stop();
    }
    const store = await Store.open({ dir });
    expect((await store.global("accounts")).size).toBe(0);
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("falls back to the next free port, saying so, when the default port is taken", async () => {
    const { startServer } = await import("../../server/index.js");
    const dirs = [await mkdtemp(join(tmpdir(), "sb-port-a-")), await mkdtemp(join(tmpdir(), "sb-port-b-"))];
    const base = { host: "127.0.0.1", portExplicit: false, eventsPort: 0, assetsDir: "", rendererDir: null, demo: false, allowOrigins: [], logLevel: "silent" as const };
    const first = await startServer({ ...base, port: 0, portExplicit: true, dataDir: dirs[0] ?? "" });
    const warnings: string[] = [];
    const logger = pino({ level: "warn" }, { write: (line: string) => warnings.push(line) });
    const second = await startServer({ ...base, port: first.port, dataDir: dirs[1] ?? "", logger });
    try {
      expect(second.port).not.toBe(first.port);
      expect(warnings.join("\n")).toContain(`port ${first.port} is in use`);
    } finally {
      await second.close();
      await first.close();
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    }
  });
});
