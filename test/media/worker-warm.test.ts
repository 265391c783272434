// Media workers warmed from the server's start. In this process: warm() starts the workers one after another,
// each once the one before has loaded werift, legs go to ready workers, and an engine closed while
// warming stops cleanly. In serve mode (the built server): a simulated call placed the moment the
// server says it is serving is answered, whether or not its workers have finished loading werift;
// a server stopped while its workers warm exits cleanly; the built worker's file carries werift. The
// first worker may be started by serve mode's entry before the server (early.ts): the engine's pool
// adopts that thread, sends it its configuration, and its legs work.
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { MediaEngine, RemoteLeg } from "../../server/media/index.js";
import type { TimeSource } from "../../server/media/frame-clock.js";
import { earlyMediaWorker, startEarlyMediaWorker, wantsMediaWorkers } from "../../server/media/worker/early.js";
import { WARM_QUIET_MS } from "../../server/media/worker/pool.js";
import { credentials, DEMO_PASSWORD } from "../helpers/api.js";
import { freshRequest, type FreshAnswer } from "../helpers/fresh-request.js";
import { poll } from "../helpers/poll.js";
import { SERVER_ENTRY, serve, type Served } from "../helpers/serve.js";

let served: Served | undefined;

afterEach(async () => {
  await served?.stop();
  served = undefined;
});

/** One request on a connection of its own; the body wrapped in the API's `data` envelope. */
function request(url: string, method: string, path: string, body?: unknown, token?: string): Promise<FreshAnswer> {
  return freshRequest(url, method, path, body, token ? { "X-Auth-Token": token } : {});
}

async function login(url: string): Promise<{ token: string; accountId: string }> {
  const res = await request(url, "PUT", "/v2/user_auth", { credentials: credentials("admin", DEMO_PASSWORD), account_name: "demo" });
  expect(res.status, res.text).toBe(201);
  const body = JSON.parse(res.text) as { auth_token: string; data: { account_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id };
}

/** A time source moved by hand: its timers fire only in advance(). */
function handTime(): TimeSource & { advance(ms: number): void } {
  let now = 0;
  let timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    schedule(fn, delayMs) {
      const timer = { at: now + delayMs, fn };
      timers.push(timer);
      return () => void (timers = timers.filter((t) => t !== timer));
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
  };
}

describe("MediaEngine.warm()", () => {
  it("starts the workers one after another, each once the one before is ready; legs go to ready ones", async () => {
    const failures: string[] = [];
    const engine = new MediaEngine({ workers: 2, onWorkerFailure: (reason) => failures.push(reason) });
    try {
      expect(engine.workers).toHaveLength(0);
      engine.warm();
      // The second waits for the first to load werift: one core stays with the main thread.
      expect(engine.workers).toHaveLength(1);
      expect(engine.workers[0]?.ready).toBe(false);
      await poll("both workers ready", async () => (engine.workers.length === 2 && engine.workers.every((w) => w.ready) ? true : undefined));
      const legs = [engine.createLeg(), engine.createLeg()];
      const threads = new Set(legs.map((leg) => (leg instanceof RemoteLeg ? leg.threadId : undefined)));
      expect(threads).toEqual(new Set(engine.workers.map((w) => w.threadId)));
      await Promise.all(legs.map((leg) => leg.close("done")));
    } finally {
      await engine.close();
    }
    expect(failures).toEqual([]);
  });

  it("a leg made while no worker is ready yet waits on the one warming, and no second worker starts for it", async () => {
    const engine = new MediaEngine({ workers: 2 });
    try {
      engine.warm();
      const leg = engine.createLeg();
      expect(engine.workers).toHaveLength(1);
      expect(leg instanceof RemoteLeg ? leg.threadId : undefined).toBe(engine.workers[0]?.threadId);
      expect(await leg.createOffer()).toMatch(/^v=0/);
      await leg.close("done");
    } finally {
      await engine.close();
    }
  });

  it("starts the next worker only once no leg operation has been under way for a while, not beside the first call", async () => {
    const time = handTime();
    const engine = new MediaEngine({ workers: 2, workerWarmTime: time });
    try {
      engine.warm();
      const leg = engine.createLeg();
      // Asked of worker 1 while it loads (answered before or after it says it is ready): its
      // readiness alone no longer starts worker 2 (it did: a third thread loading beside the first
      // call on two cores). The pool's time stands still, so it is not quiet for long enough yet.
      expect(await leg.createOffer()).toMatch(/^v=0/);
      expect(await engine.workers[0]?.loaded).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(engine.workers).toHaveLength(1);
      time.advance(WARM_QUIET_MS);
      expect(engine.workers).toHaveLength(2);
      await poll("the second worker ready", async () => (engine.workers.every((w) => w.ready) ? true : undefined));
      await leg.close("done");
    } finally {
      await engine.close();
    }
  });

  it("starts the next worker at once when every started worker already holds two legs", async () => {
    const engine = new MediaEngine({ workers: 2, workerWarmTime: handTime() });
    try {
      engine.warm();
      const legs = [engine.createLeg(), engine.createLeg()];
      // Both on worker 1 (none ready yet); once it is ready it holds two legs: worker 2 starts then,
      // though the pool's time never moves.
      await Promise.all(legs.map((leg) => leg.createOffer()));
      expect(await engine.workers[0]?.loaded).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(engine.workers).toHaveLength(2);
      await Promise.all(legs.map((leg) => leg.close("done")));
    } finally {
      await engine.close();
    }
  });

  it("an engine closed while its workers warm stops them, reporting no failure", async () => {
    const failures: string[] = [];
    const engine = new MediaEngine({ workers: 2, onWorkerFailure: (reason) => failures.push(reason) });
    engine.warm();
    await engine.close();
    expect(engine.workers).toHaveLength(0);
    expect(failures).toEqual([]);
  });
});

describe("media workers warmed from the start", () => {
  it("the built worker's file holds werift itself (one file for node's loader), not an import of the package", async () => {
    // media-worker.js compiles media-worker.cjs (the worker, werift inside) through its code cache.
    const worker = await readFile(join(dirname(SERVER_ENTRY), "media-worker.cjs"), "utf8");
    expect(worker).toMatch(/\bclass RTCPeerConnection\b|\bRTCPeerConnection = class\b/);
    expect(worker).not.toMatch(/from "werift"|require\("werift"\)/);
    expect(await readFile(join(dirname(SERVER_ENTRY), "media-worker.js"), "utf8")).toContain("media-worker.cjs");
  });

  it("a simulated call placed as soon as the server is serving is answered by the queue (its legs on workers that may still be warming)", async () => {
    served = await serve();
    const { url } = served;
    const { token, accountId } = await login(url);
    const started = await request(url, "POST", `/v2/accounts/${accountId}/sim/calls`, { to: "5001", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "tone_stream://1200" }, token);
    expect(started.status, `${started.text}\n${served.output()}`).toBe(201);
    const id = (JSON.parse(started.text) as { data: { id: string } }).data.id;
    await poll("the queue to answer the simulated caller", async () => {
      const row = await request(url, "GET", `/v2/accounts/${accountId}/sim/calls/${id}`, undefined, token);
      return (JSON.parse(row.text) as { data: { state: string } }).data.state === "answered" ? true : undefined;
    });
    const channel = await request(url, "GET", `/v2/accounts/${accountId}/channels/${id}`, undefined, token);
    expect(channel.status, channel.text).toBe(200);
    const hangup = await request(url, "POST", `/v2/accounts/${accountId}/sim/calls/${id}`, { action: "hangup" }, token);
    expect(hangup.status, hangup.text).toBe(202);
    expect(served.output()).not.toMatch(/media worker|error/i);
  });

  it("a server stopped while its workers are still warming exits with 0 and says nothing wrong", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "switchboard-test-"));
    try {
      const child = spawn(process.execPath, [SERVER_ENTRY, "--port", "0", "--events-port", "0", "--data-dir", dataDir], { stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
      await new Promise<void>((resolve) =>
        child.stdout.on("data", (chunk: Buffer) => {
          output += chunk.toString("utf8");
          if (output.includes("Switchboard is serving")) resolve();
        }),
      );
      child.kill("SIGTERM");
      expect(await exited, output).toBe(0);
      expect(output).not.toMatch(/media worker|error|shutdown failed/i);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("the first media worker started before the server (serve mode's entry)", () => {
  it("is started only when the command line leaves the server media workers", () => {
    expect(wantsMediaWorkers([])).toBe(true);
    expect(wantsMediaWorkers(["--port", "0", "--media-workers", "2"])).toBe(true);
    expect(wantsMediaWorkers(["--media-workers", "0"])).toBe(false);
    expect(wantsMediaWorkers(["--port", "8000", "--media-workers=0"])).toBe(false);
    expect(wantsMediaWorkers(["--help"])).toBe(false);
    // A port of 0 is not a worker count.
    expect(wantsMediaWorkers(["--port", "0"])).toBe(true);
    // Nor is one where a pool's flags would keep it from being adopted.
    startEarlyMediaWorker(new URL(`file://${join(dirname(SERVER_ENTRY), "media-worker.js")}`), { SWITCHBOARD_WORKER_SEMI_SPACE_MB: "8" });
    expect(earlyMediaWorker()).toBeUndefined();
  });

  it("is adopted as the engine's first worker: configured by message, ready, and its legs make offers on the configured address", async () => {
    startEarlyMediaWorker(new URL(`file://${join(dirname(SERVER_ENTRY), "media-worker.js")}`), {});
    const early = earlyMediaWorker();
    expect(early).toBeDefined();
    const failures: string[] = [];
    const engine = new MediaEngine({ workers: 2, host: "127.0.0.1", onWorkerFailure: (reason) => failures.push(reason) });
    try {
      engine.warm();
      expect(engine.workers[0]?.threadId).toBe(early?.threadId);
      // Taken once: nothing is left for a second engine to adopt.
      expect(earlyMediaWorker()).toBeUndefined();
      await poll("both workers ready", async () => (engine.workers.length === 2 && engine.workers.every((w) => w.ready) ? true : undefined));
      const legs = [engine.createLeg(), engine.createLeg()];
      const threads = legs.map((leg) => (leg instanceof RemoteLeg ? leg.threadId : undefined));
      expect(new Set(threads)).toEqual(new Set(engine.workers.map((w) => w.threadId)));
      const onEarly = legs[threads.indexOf(early?.threadId)];
      expect(onEarly).toBeDefined();
      const offer = (await onEarly?.createOffer()) ?? "";
      expect(offer).toMatch(/^a=candidate:.* 127\.0\.0\.1 \d+ typ host/m);
      await Promise.all(legs.map((leg) => leg.close("done")));
    } finally {
      await engine.close();
    }
    expect(failures).toEqual([]);
  });
});
