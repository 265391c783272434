// Issue 14, items 9 and 11, on the real serve-mode server: bindings bounded per message and per
// socket (a 28,000-binding message refused whole, the server answering others meanwhile); idle
// sockets closed, silent ones cut; sockets capped in total, per account and per token, refused with
// a clear error, so that with the server's descriptors lowered logins never meet EMFILE.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "node:http";
import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EventsClient, UpgradeRefused, type ReplyMessage } from "../helpers/events-client.js";
import { REPO_ROOT, SERVER_ENTRY, demoGrant, serve, type DemoGrant, type Served } from "../helpers/serve.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";

const open: EventsClient[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const eventsUrl = (served: Pick<Served, "url">): string => `${served.url.replace(/^http/, "ws")}/events`;

async function connect(served: Pick<Served, "url">): Promise<EventsClient> {
  const client = await EventsClient.connect(eventsUrl(served));
  open.push(client);
  return client;
}

function subscribe(client: EventsClient, grant: DemoGrant, bindings: string[], timeoutMs = 10_000): Promise<ReplyMessage> {
  return client.request({ action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, bindings } }, timeoutMs);
}

/** A websocket upgrade by hand: the status, and the body when it was refused. */
function upgrade(served: Served): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${served.url}/events`, {
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": randomBytes(16).toString("base64") },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, body: "" });
    });
    req.on("response", (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function get(served: Served, grant: DemoGrant): Promise<number> {
  return (await fetch(`${served.url}/v2/accounts/${grant.accountId}`, { headers: { "X-Auth-Token": grant.token } })).status;
}

const many = (count: number, prefix: string): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

describe("bindings are bounded per message and per socket", () => {
  let served: Served;
  let grant: DemoGrant;
  beforeAll(async () => {
    served = await serve();
    grant = await demoGrant(served.url);
  });
  afterAll(async () => {
    await served.stop();
  });

  it("refuses 28,000 bindings in one message whole, unread, while the server keeps answering another client", async () => {
    const witness = await connect(served);
    expect(await subscribe(witness, grant, ["object.doc_created.device"])).toMatchObject({ status: "success" });
    const flooders = await Promise.all(Array.from({ length: 4 }, () => connect(served)));
    // 28,000 bindings (370 KB) are refused unread, by size; 1,001 (11 KB) read and refused by count.
    const huge = JSON.stringify({ action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, bindings: many(28_000, "call.") } });
    const tooLarge = flooders.map((f) => {
      f.sendRaw(huge);
      return f.next((m) => m.action === "reply" && (m.data.errors?.[0] ?? "").startsWith("message too large"), 30_000);
    });
    const floods = flooders.map((f) => subscribe(f, grant, many(1_001, "call."), 30_000));
    // Meanwhile the other client is served: HTTP, its socket's round trips, its events.
    const statuses = await Promise.all(Array.from({ length: 10 }, () => get(served, grant)));
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await witness.ping()).toMatchObject({ response: "pong" });

    for (const reply of await Promise.all(floods)) {
      expect(reply).toEqual({
        action: "reply",
        request_id: expect.any(String),
        status: "error",
        data: { errors: ["too many bindings: 1001 in one message, at most 1000"] },
      });
    }
    for (const reply of await Promise.all(tooLarge)) {
      expect(reply).toEqual({ action: "reply", status: "error", data: { errors: [`message too large: ${Buffer.byteLength(huge)} bytes, at most 131072`] } });
    }
    // Nothing of the refused messages took hold: the subscribed list holds only what came after.
    expect(await subscribe(flooders[0] ?? witness, grant, ["call.CHANNEL_DESTROY.*"])).toMatchObject({ status: "success", data: { subscribed: ["call.CHANNEL_DESTROY.*"] } });

    const device = await fetch(`${served.url}/v2/accounts/${grant.accountId}/devices`, {
      method: "PUT",
      headers: { "X-Auth-Token": grant.token, "Content-Type": "application/json" },
      body: JSON.stringify({ data: { name: "after the flood" } }),
    });
    expect(device.status).toBe(201);
    await witness.next((m) => m.action === "event" && m.routing_key === "object.doc_created.device");
  });

  it("holds at most 1,000 bindings a socket: a message that would pass it adds nothing", async () => {
    const client = await connect(served);
    expect(await subscribe(client, grant, many(600, "callq.queue.q"))).toMatchObject({ status: "success" });
    expect(await subscribe(client, grant, many(500, "callq.recipient.r"))).toMatchObject({
      status: "error",
      data: { errors: ["too many bindings: this connection would hold 1100, at most 1000"] },
    });
    // Bindings already held and repeats within a message do not count again.
    const held = await subscribe(client, grant, [...many(600, "callq.queue.q"), ...many(400, "callq.session.s")]);
    expect(held.status).toBe("success");
    expect(held.data.subscribed).toHaveLength(1000);
    expect(held.data.subscribed?.some((b) => b.startsWith("callq.recipient."))).toBe(false);
    expect(await subscribe(client, grant, ["object.doc_created.device"])).toMatchObject({
      status: "error",
      data: { errors: ["too many bindings: this connection would hold 1001, at most 1000"] },
    });
    // A message holds at most 1,000 bindings, repeats included.
    expect(await subscribe(client, grant, [...many(600, "callq.queue.q"), ...many(401, "callq.session.s")])).toMatchObject({
      status: "error",
      data: { errors: ["too many bindings: 1001 in one message, at most 1000"] },
    });
    // Room made by unsubscribing is room again; a binding repeated in one message takes one place.
    expect(await client.request({ action: "unsubscribe", data: { account_id: grant.accountId, bindings: ["callq.queue.q0"] } })).toMatchObject({ status: "success" });
    expect(await subscribe(client, grant, ["object.doc_created.device", "object.doc_created.device"])).toMatchObject({ status: "success" });
  });

  it("delivers through 1,000 bindings exactly what they match, keyed by the first that does", async () => {
    const full = await connect(served);
    // Among 999 bindings that match nothing, three that match a device's creation, the middle one first.
    const bindings = [...many(500, "object.doc_created.type"), "object.*.device", ...many(497, "object.doc_edited.type"), "object.#", "object.doc_created.device"];
    expect(await subscribe(full, grant, bindings)).toMatchObject({ status: "success" });
    const narrow = await connect(served);
    expect(await subscribe(narrow, grant, ["object.doc_created.device"])).toMatchObject({ status: "success" });
    const res = await fetch(`${served.url}/v2/accounts/${grant.accountId}/devices`, {
      method: "PUT",
      headers: { "X-Auth-Token": grant.token, "Content-Type": "application/json" },
      body: JSON.stringify({ data: { name: "one of many" } }),
    });
    expect(res.status).toBe(201);
    await narrow.next((m) => m.action === "event");
    await full.ping();
    expect(full.events.map((e) => [e.routing_key, e.subscribed_key])).toEqual([["object.doc_created.device", "object.*.device"]]);
  });
});

describe("idle and silent sockets", () => {
  let served: Served;
  let grant: DemoGrant;
  beforeAll(async () => {
    served = await serve({ args: ["--events-idle", "0.5"] });
    grant = await demoGrant(served.url);
  });
  afterAll(async () => {
    await served.stop();
  });

  it("closes a socket that subscribes to nothing within the window, telling it why", async () => {
    const idle = await connect(served);
    expect(await idle.closed).toEqual({ code: 4002, reason: "idle" });
    expect(idle.received).toEqual([{ action: "error", data: { errors: ["no subscription within 0.5 s: disconnected"] } }]);
  });

  it("keeps a subscribed socket that answers pings, and closes it once it unsubscribes everything", async () => {
    const client = await connect(served);
    expect(await subscribe(client, grant, ["call.#"])).toMatchObject({ status: "success" });
    // Several windows go by: pinged and answering, it stays.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await client.ping()).toMatchObject({ response: "pong" });
    expect(await client.request({ action: "unsubscribe", data: {} })).toMatchObject({ status: "success", data: { subscribed: [] } });
    expect((await client.closed).code).toBe(4002);
  });

  it("cuts a subscribed socket that stops answering pings", async () => {
    const deaf = new WebSocket(eventsUrl(served), { autoPong: false });
    const closed = new Promise<number>((resolve) => deaf.on("close", (code) => resolve(code)));
    const replied = new Promise<string>((resolve) => deaf.once("message", (data: Buffer) => resolve(data.toString())));
    await new Promise((resolve) => deaf.once("open", resolve));
    deaf.send(JSON.stringify({ action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, binding: "call.#" } }));
    expect(JSON.parse(await replied)).toMatchObject({ status: "success" });
    // Cut without a close frame: the peer answers nothing, so it is owed none.
    expect(await closed).toBe(1006);
  });
});

/** The server's process, found by its data directory on its command line. */
function serverPid(served: Served): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
    } catch {
      continue;
    }
    if (cmdline.split("\0").includes(served.dataDir)) return Number(entry);
  }
  throw new Error(`no process serves ${served.dataDir}`);
}

describe("sockets are capped in total and per token; waiting ones give way", () => {
  const MAX = 80;
  const PER_TOKEN = 16;
  const WAITING = MAX / 4;
  /** Below what the capped sockets and the server's own files need, above what an uncapped flood would take. */
  const DESCRIPTORS = 160;
  let served: Served;
  beforeAll(async () => {
    served = await serve({ args: ["--events-max-sockets", String(MAX), "--events-max-per-account", String(MAX)] });
    const pid = serverPid(served);
    execFileSync("prlimit", ["--pid", String(pid), `--nofile=${DESCRIPTORS}:${DESCRIPTORS}`]);
    expect(readFileSync(`/proc/${pid}/limits`, "utf8")).toMatch(new RegExp(`Max open files\\s+${DESCRIPTORS}\\s`));
  });
  afterAll(async () => {
    await served.stop();
  });

  it("refuses extra sockets with a clear error, and logins and the capped sockets go on", async () => {
    const grants: DemoGrant[] = [];
    for (const user of ["admin", "admin", "agent1", "agent2", "agent3"]) grants.push(await demoGrant(served.url, user));
    const binding = ["object.doc_created.device"];
    const opened = async (count: number): Promise<EventsClient[]> => Promise.all(Array.from({ length: count }, () => connect(served)));

    // A quarter of the sockets may wait for their first subscription; a newcomer past that
    // closes the one waiting longest, which is told why.
    const waiting = await opened(WAITING);
    const newcomer = await connect(served);
    const [oldest, ...rest] = waiting;
    if (!oldest) throw new Error("no socket opened");
    expect(await oldest.closed).toEqual({ code: 4002, reason: "idle" });
    expect(oldest.received).toEqual([{ action: "error", data: { errors: ["no subscription yet, and the server needed the room: disconnected"] } }]);

    // Per token: the 17th socket on one token is refused and closed.
    const [first] = grants;
    if (!first) throw new Error("no grant");
    const bound: EventsClient[] = [];
    const plan = grants.flatMap((g) => Array.from({ length: PER_TOKEN }, () => g));
    for (const [i, client] of [...rest, newcomer].entries()) {
      if (i === PER_TOKEN) {
        expect(await subscribe(client, first, binding)).toMatchObject({
          status: "error",
          data: { errors: [`too many event sockets for this token: ${PER_TOKEN} open, at most ${PER_TOKEN}`] },
        });
        expect(await client.closed).toEqual({ code: 1013, reason: "too many sockets" });
        continue;
      }
      const grant = plan.shift();
      if (!grant) throw new Error("the plan ran out of tokens");
      expect(await subscribe(client, grant, binding)).toMatchObject({ status: "success" });
      bound.push(client);
    }
    while (bound.length < MAX) {
      for (const client of await opened(Math.min(WAITING, MAX - bound.length))) {
        const grant = plan.shift();
        if (!grant) throw new Error("the plan ran out of tokens");
        expect(await subscribe(client, grant, binding)).toMatchObject({ status: "success" });
        bound.push(client);
      }
    }

    // All 80 subscribed: every further upgrade is refused, a flood of 200 that would hold its
    // sockets open (and, uncapped, pass the descriptor limit) too.
    const results: (number | "open")[] = [];
    for (let batch = 0; batch < 8; batch++) {
      const attempts = Array.from({ length: 25 }, () =>
        connect(served).then(
          () => "open" as const,
          (err: unknown) => (err instanceof UpgradeRefused ? err.status : 0),
        ),
      );
      results.push(...(await Promise.all(attempts)));
    }
    expect(results.filter((s) => s !== 429)).toEqual([]);
    const full = await upgrade(served);
    expect(full.status).toBe(429);
    expect(JSON.parse(full.body)).toMatchObject({
      status: "error",
      error: "429",
      message: "too_many_requests",
      data: { message: `too many event sockets: ${MAX} open, at most ${MAX}`, retry_after_s: 1 },
    });

    // At the cap, under the lowered descriptor limit: logins and requests are served, events flow.
    const login = await demoGrant(served.url, "supervisor");
    expect(await get(served, login)).toBe(200);
    const device = await fetch(`${served.url}/v2/accounts/${login.accountId}/devices`, {
      method: "PUT",
      headers: { "X-Auth-Token": first.token, "Content-Type": "application/json" },
      body: JSON.stringify({ data: { name: "at the cap" } }),
    });
    expect(device.status).toBe(201);
    await Promise.all(bound.map((c) => c.next((m) => m.action === "event" && m.routing_key === "object.doc_created.device")));
    expect(served.output()).not.toMatch(/EMFILE/);

    // Room made is room again.
    await bound[0]?.close();
    expect((await upgrade(served)).status).toBe(101);
  });
});

describe("sockets are capped per account", () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ config: { eventSockets: { maxSockets: 40, maxPerAccount: 5, maxPerToken: 3 } } });
  });
  afterAll(async () => {
    await api.close();
  });

  it("refuses the socket past the account's cap, closes it, and leaves other accounts their own", async () => {
    const url = `${api.url.replace(/^http/, "ws")}/events`;
    const demo = [await api.login("admin"), await api.login("agent1")];
    const other = await createAccount(api, "otherco");
    const on = async (grant: { token: string; accountId: string }): Promise<{ client: EventsClient; reply: ReplyMessage }> => {
      const client = await EventsClient.connect(url);
      open.push(client);
      return { client, reply: await client.subscribe(grant.accountId, "call.#", { auth_token: grant.token }) };
    };
    for (const grant of [demo[0], demo[0], demo[0], demo[1], demo[1]]) {
      if (!grant) throw new Error("two logins expected");
      expect((await on(grant)).reply).toMatchObject({ status: "success" });
    }
    const refused = await on(await api.login("agent2"));
    expect(refused.reply).toMatchObject({ status: "error", data: { errors: ["too many event sockets for this account: 5 open, at most 5"] } });
    expect((await refused.client.closed).code).toBe(1013);
    expect((await on(other)).reply).toMatchObject({ status: "success" });
  });
});

describe("the socket cap follows the descriptor limit", () => {
  it("takes half the soft descriptor limit when that is below 512: at 100 descriptors, 13 sockets may wait", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "switchboard-test-"));
    const child = spawn("prlimit", ["--nofile=100:100", "--", process.execPath, SERVER_ENTRY, "--port", "0", "--events-port", "0", "--data-dir", dataDir], {
      cwd: REPO_ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      let output = "";
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL within 30 s:\n${output}`)), 30_000);
        const onOutput = (chunk: Buffer): void => {
          output += chunk.toString();
          const match = /Switchboard is serving (http:\/\/[\d.:]+)/.exec(output);
          if (match?.[1]) {
            clearTimeout(timer);
            resolve(match[1]);
          }
        };
        child.stdout.on("data", onOutput);
        child.stderr.on("data", onOutput);
      });
      // 50 sockets at most, a quarter of them (13) waiting: the 14th closes the first.
      const served = { url, dataDir, output: () => output, stop: async () => undefined };
      const waiting: EventsClient[] = [];
      for (let i = 0; i < 13; i++) waiting.push(await connect(served));
      await connect(served);
      expect(await waiting[0]?.closed).toEqual({ code: 4002, reason: "idle" });
      expect(waiting.slice(1).every((c) => c.socket.readyState === WebSocket.OPEN)).toBe(true);
    } finally {
      await Promise.all(open.splice(0).map((c) => c.close()));
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
