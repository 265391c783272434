// The event websocket (blackhole protocol) on a real server: bindings, refusals, malformed
// requests, catch-up with `since` (also while events keep coming), slow clients, the classic port.
import { createServer, type Server } from "node:net";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/index.js";
import { parseArgs, type ServerConfig } from "../../server/config.js";
import { startServer } from "../../server/index.js";
import { TestClock, createAccount, startApi, type TestApi, localServerConfig } from "../helpers/api.js";
import { EventsClient, type EventMessage } from "../helpers/events-client.js";

const OTHER_ACCOUNT = "f".repeat(32);

let api: TestApi;
let token: string;
let accountId: string;
let eventsUrl: string;
const open: EventsClient[] = [];

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
  eventsUrl = `${api.url.replace(/^http/, "ws")}/events`;
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});
afterAll(async () => {
  await api.close();
});

async function connect(url = eventsUrl, headers: Record<string, string> = {}): Promise<EventsClient> {
  const client = await EventsClient.connect(url, headers);
  open.push(client);
  return client;
}

/** A client subscribed to one binding form (or several), the subscription acknowledged. */
async function subscribed(binding: string | string[], extra: Record<string, unknown> = {}): Promise<EventsClient> {
  const client = await connect();
  const reply = await client.subscribe(accountId, binding, { auth_token: token, ...extra });
  expect(reply).toMatchObject({ action: "reply", status: "success" });
  return client;
}

function publish(routingKey: string, name: string, data: Record<string, unknown> = {}, account = accountId): BusEvent {
  return api.server.events.bus.publish({ account_id: account, routing_key: routingKey, name, data });
}

/** What the call engine and the queues will publish, with events of another account mixed in. */
function publishBatch(): void {
  publish("call.CHANNEL_CREATE.call1", "CHANNEL_CREATE", { call_id: "call1" });
  publish("call.CHANNEL_ANSWER.call1", "CHANNEL_ANSWER", { call_id: "call1" });
  publish("call.CHANNEL_CREATE.call2", "CHANNEL_CREATE", { call_id: "call2" });
  publish("call.CHANNEL_CREATE.call9", "CHANNEL_CREATE", { call_id: "call9" }, OTHER_ACCOUNT);
  publish("callq.queue.q1", "join");
  publish("callq.recipient.u1", "login");
  publish("callq.queue.q2", "join");
  publish("callq.session.s1", "create");
  publish("callq.queue.q1", "leave");
  publish("callq.queue.q1", "join", {}, OTHER_ACCOUNT);
  publish("call.CHANNEL_DESTROY.call1", "CHANNEL_DESTROY", { call_id: "call1" });
  publish("notification.missed_call.n1", "missed_call");
  publish("texting.message.m1", "message");
}

const seen = (events: EventMessage[]): string[] => events.map((e) => `${e.routing_key} ${e.name}`);

const CALL1 = ["call.CHANNEL_CREATE.call1 CHANNEL_CREATE", "call.CHANNEL_ANSWER.call1 CHANNEL_ANSWER", "call.CHANNEL_DESTROY.call1 CHANNEL_DESTROY"];
const QUEUES = ["callq.queue.q1 join", "callq.queue.q2 join", "callq.queue.q1 leave"];

describe("event websocket: bindings", () => {
  // `*` stands for one segment, `#` for the rest; `qubicle.` is the old spelling of `callq.`.
  const forms: [string, string[]][] = [
    ["call.CHANNEL_CREATE.*", ["call.CHANNEL_CREATE.call1 CHANNEL_CREATE", "call.CHANNEL_CREATE.call2 CHANNEL_CREATE"]],
    ["call.CHANNEL_ANSWER.call1", ["call.CHANNEL_ANSWER.call1 CHANNEL_ANSWER"]],
    ["call.CHANNEL_CREATE.call2", ["call.CHANNEL_CREATE.call2 CHANNEL_CREATE"]],
    ["call.*.call1", CALL1],
    ["call.#", ["call.CHANNEL_CREATE.call1 CHANNEL_CREATE", "call.CHANNEL_ANSWER.call1 CHANNEL_ANSWER", "call.CHANNEL_CREATE.call2 CHANNEL_CREATE", "call.CHANNEL_DESTROY.call1 CHANNEL_DESTROY"]],
    ["callq.queue.*", QUEUES],
    ["qubicle.queue.*", QUEUES],
    ["callq.queue.q1", ["callq.queue.q1 join", "callq.queue.q1 leave"]],
    ["qubicle.recipient.u1", ["callq.recipient.u1 login"]],
    ["callq.recipient.*", ["callq.recipient.u1 login"]],
    ["callq.session.*", ["callq.session.s1 create"]],
    ["callq.#", ["callq.queue.q1 join", "callq.recipient.u1 login", "callq.queue.q2 join", "callq.session.s1 create", "callq.queue.q1 leave"]],
    ["notification.*.*", ["notification.missed_call.n1 missed_call"]],
    ["texting.message.*", ["texting.message.m1 message"]],
    ["call.CHANNEL_HOLD.*", []],
  ];

  it.each(forms)("%s receives exactly its events of the account, in order", async (binding, expected) => {
    const client = await subscribed(binding);
    publishBatch();
    await client.ping();
    expect(seen(client.events)).toEqual(expected);
    for (const e of client.events) expect(e).toMatchObject({ action: "event", subscribed_key: binding, account_id: accountId });
    const seqs = client.events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("answers a subscribe with the bindings now held, and events in the documented shape", async () => {
    const client = await connect();
    const reply = await client.request({ action: "subscribe", request_id: "req-1", auth_token: token, data: { account_id: accountId, binding: "call.CHANNEL_CREATE.*" } });
    expect(reply).toEqual({ action: "reply", request_id: "req-1", status: "success", data: { subscribed: ["call.CHANNEL_CREATE.*"] } });
    const published = publish("call.CHANNEL_CREATE.abc", "CHANNEL_CREATE", { call_id: "abc", caller_id_number: "+15551234" });
    const [event] = await client.waitForEvents(1);
    expect(event).toEqual({
      action: "event",
      subscribed_key: "call.CHANNEL_CREATE.*",
      name: "CHANNEL_CREATE",
      routing_key: "call.CHANNEL_CREATE.abc",
      account_id: accountId,
      seq: published.seq,
      data: { call_id: "abc", caller_id_number: "+15551234" },
    });
  });

  it("delivers document events from real API writes by type and action", async () => {
    const created = await subscribed("object.doc_created.device");
    const anyDevice = await subscribed("object.*.device");
    const anyEdit = await subscribed("object.doc_edited.*");
    const base = `/v2/accounts/${accountId}/devices`;
    const put = await api.call<{ id: string }>("PUT", base, { token, data: { name: "ws desk phone" } });
    expect(put.status).toBe(201);
    const id = put.body.data.id;
    expect((await api.call("POST", `${base}/${id}`, { token, data: { name: "ws desk phone, renamed" } })).status).toBe(200);
    expect((await api.call("PUT", `/v2/accounts/${accountId}/blacklists`, { token, data: { name: "ws blocklist" } })).status).toBe(201);
    expect((await api.call("DELETE", `${base}/${id}`, { token })).status).toBe(200);
    await Promise.all([created.ping(), anyDevice.ping(), anyEdit.ping()]);

    expect(seen(created.events)).toEqual(["object.doc_created.device doc_created"]);
    expect(created.events[0]?.data).toMatchObject({ action: "doc_created", type: "device", id, account_id: accountId });
    expect(seen(anyDevice.events)).toEqual(["object.doc_created.device doc_created", "object.doc_edited.device doc_edited", "object.doc_deleted.device doc_deleted"]);
    expect(anyDevice.events.every((e) => e.data.id === id)).toBe(true);
    expect(seen(anyEdit.events)).toEqual(["object.doc_edited.device doc_edited"]);
  });

  it("takes several bindings at once and sends an event they share once, keyed by the first", async () => {
    const client = await connect();
    const reply = await client.subscribe(accountId, ["call.CHANNEL_CREATE.*", "call.*.call1"], { auth_token: token });
    expect(reply.data.subscribed).toEqual(["call.CHANNEL_CREATE.*", "call.*.call1"]);
    publishBatch();
    await client.ping();
    expect(client.events.map((e) => [e.routing_key, e.subscribed_key])).toEqual([
      ["call.CHANNEL_CREATE.call1", "call.CHANNEL_CREATE.*"],
      ["call.CHANNEL_ANSWER.call1", "call.*.call1"],
      ["call.CHANNEL_CREATE.call2", "call.CHANNEL_CREATE.*"],
      ["call.CHANNEL_DESTROY.call1", "call.*.call1"],
    ]);
  });

  it("adds to what a connection holds and lets `binding` win over `bindings`", async () => {
    const client = await subscribed("callq.queue.q2");
    const reply = await client.request({ action: "subscribe", data: { account_id: accountId, binding: "callq.session.*", bindings: ["call.#"] } });
    // No auth_token: the first message carried it.
    expect(reply).toMatchObject({ status: "success", data: { subscribed: ["callq.queue.q2", "callq.session.*"] } });
    publishBatch();
    await client.ping();
    expect(seen(client.events)).toEqual(["callq.queue.q2 join", "callq.session.s1 create"]);
  });

  it("stops delivery on unsubscribe, of one binding or of all", async () => {
    const client = await subscribed(["call.CHANNEL_CREATE.*", "callq.queue.*"]);
    const one = await client.request({ action: "unsubscribe", data: { account_id: accountId, binding: "call.CHANNEL_CREATE.*" } });
    expect(one).toMatchObject({ status: "success", data: { unsubscribed: ["call.CHANNEL_CREATE.*"], subscribed: ["callq.queue.*"] } });
    publishBatch();
    await client.ping();
    expect(seen(client.events)).toEqual(QUEUES);

    const all = await client.request({ action: "unsubscribe" });
    expect(all).toMatchObject({ status: "success", data: { unsubscribed: ["callq.queue.*"], subscribed: [] } });
    publishBatch();
    await client.ping();
    expect(client.events).toHaveLength(QUEUES.length);
  });

  it("answers ping with pong", async () => {
    const client = await connect();
    const reply = await client.request({ action: "ping", request_id: "p-1" });
    expect(reply).toMatchObject({ action: "reply", request_id: "p-1", response: "pong", data: { response: "pong" } });
  });
});

describe("event websocket: refusals", () => {
  it("refuses a binding to another account, both ways, and keeps accounts apart", async () => {
    const other = await createAccount(api, "wsother");
    const mine = await connect();
    const refused = await mine.subscribe(other.accountId, "call.#", { auth_token: token });
    expect(refused).toMatchObject({ action: "reply", status: "error", data: { errors: ["unauthorized account id"] } });

    const theirs = await connect();
    const alsoRefused = await theirs.subscribe(accountId, "call.#", { auth_token: other.token });
    expect(alsoRefused).toMatchObject({ status: "error", data: { errors: ["unauthorized account id"] } });
    expect((await theirs.subscribe(other.accountId, "call.#")).status).toBe("success");

    publish("call.CHANNEL_CREATE.ours", "CHANNEL_CREATE");
    publish("call.CHANNEL_CREATE.theirs", "CHANNEL_CREATE", {}, other.accountId);
    await Promise.all([mine.ping(), theirs.ping()]);
    expect(mine.events).toEqual([]);
    expect(seen(theirs.events)).toEqual(["call.CHANNEL_CREATE.theirs CHANNEL_CREATE"]);
  });

  it("refuses a subscribe without a token or with an unknown one", async () => {
    const client = await connect();
    expect(await client.subscribe(accountId, "call.#")).toMatchObject({ status: "error", data: { errors: ["missing authentication token"] } });
    expect(await client.subscribe(accountId, "call.#", { auth_token: "0123456789abcdef" })).toMatchObject({
      status: "error",
      data: { errors: ["failed to authenticate token"] },
    });
    expect(await client.subscribe(accountId, "call.#", { auth_token: 42 })).toMatchObject({ status: "error", data: { errors: ["invalid token"] } });
    publishBatch();
    await client.ping();
    expect(client.events).toEqual([]);
  });

  it("refuses an expired token", async () => {
    const clock = new TestClock();
    const short = await startApi({ tokenTtlS: 60, clock, demo: true });
    try {
      const login = await short.login("admin");
      clock.advance(61_000);
      const client = await EventsClient.connect(`${short.url.replace(/^http/, "ws")}/events`);
      try {
        const reply = await client.subscribe(login.accountId, "call.#", { auth_token: login.token });
        expect(reply).toMatchObject({ status: "error", data: { errors: ["failed to authenticate token"] } });
      } finally {
        await client.close();
      }
    } finally {
      await short.close();
    }
  });

  it("answers malformed requests with errors and keeps the connection", async () => {
    const client = await connect();
    client.sendRaw("{not json");
    const bad = await client.next((m) => m.action === "reply" && m.status === "error");
    expect(bad).toEqual({ action: "reply", status: "error", data: { errors: ["invalid JSON"] } });
    client.sendRaw("[1,2]");
    await client.next((m) => m.action === "reply" && m.data.errors?.[0] === "a message must be a JSON object");

    expect(await client.request({ action: "dance", request_id: "d" })).toEqual({ action: "reply", request_id: "d", status: "error", data: { errors: ["unknown action 'dance'"] } });
    expect(await client.request({ request_id: "n" })).toMatchObject({ status: "error", data: { errors: ["action is required"] } });

    const subscribe = (data: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      client.request({ action: "subscribe", auth_token: token, ...extra, data: { account_id: accountId, ...data } });
    expect(await subscribe({})).toMatchObject({ status: "error", data: { errors: ["binding or bindings is required"] } });
    expect(await subscribe({ binding: "" })).toMatchObject({ status: "error", data: { errors: ["invalid binding ''"] } });
    expect(await subscribe({ bindings: [] })).toMatchObject({ status: "error", data: { errors: ["binding or bindings is required"] } });
    expect(await subscribe({ bindings: ["call.#", "nonsense.*", "call..x", 7] })).toMatchObject({
      status: "error",
      data: { errors: ["invalid binding 'nonsense.*'", "invalid binding 'call..x'", "invalid binding '7'"] },
    });
    expect(await subscribe({ bindings: "call.#" })).toMatchObject({ status: "error", data: { errors: ["bindings must be a list of bindings"] } });
    expect(await subscribe({ binding: "call.#", since: "yesterday" })).toMatchObject({ status: "error", data: { errors: ["since must be a whole number"] } });
    expect(await client.request({ action: "subscribe", auth_token: token, data: { binding: "call.#" } })).toMatchObject({
      status: "error",
      data: { errors: ["account_id is required"] },
    });
    // Nothing of the refused subscriptions took hold, and the connection still answers.
    publishBatch();
    expect(await client.ping()).toMatchObject({ response: "pong" });
    expect(client.events).toEqual([]);
  });
});

describe("event websocket: catching up with since", () => {
  it("sends every event missed while away exactly once, then the live ones", async () => {
    const first = await subscribed("call.CHANNEL_CREATE.*");
    publish("call.CHANNEL_CREATE.before1", "CHANNEL_CREATE");
    publish("call.CHANNEL_CREATE.before2", "CHANNEL_CREATE");
    const lastSeen = (await first.waitForEvents(2)).at(-1)?.seq ?? 0;
    await first.close();

    const missed: number[] = [];
    for (let i = 0; i < 5; i++) {
      missed.push(publish(`call.CHANNEL_CREATE.missed${i}`, "CHANNEL_CREATE").seq);
      publish(`call.CHANNEL_ANSWER.missed${i}`, "CHANNEL_ANSWER");
      publish(`call.CHANNEL_CREATE.elsewhere${i}`, "CHANNEL_CREATE", {}, OTHER_ACCOUNT);
    }

    const second = await connect();
    const reply = await second.subscribe(accountId, "call.CHANNEL_CREATE.*", { auth_token: token, since: lastSeen });
    expect(reply).toMatchObject({ status: "success", data: { subscribed: ["call.CHANNEL_CREATE.*"], complete: true } });
    const live = [publish("call.CHANNEL_CREATE.live1", "CHANNEL_CREATE").seq, publish("call.CHANNEL_CREATE.live2", "CHANNEL_CREATE").seq];
    await second.ping();
    expect(second.events.map((e) => e.seq)).toEqual([...missed, ...live]);
    expect(second.events.map((e) => e.routing_key)).toEqual([
      ...[0, 1, 2, 3, 4].map((i) => `call.CHANNEL_CREATE.missed${i}`),
      "call.CHANNEL_CREATE.live1",
      "call.CHANNEL_CREATE.live2",
    ]);
  });

  it("takes since inside data too, and sends nothing twice that a held binding already delivered", async () => {
    const client = await subscribed("call.*.call1");
    const start = api.server.events.bus.lastSeq;
    publishBatch();
    await client.ping();
    expect(seen(client.events)).toEqual(CALL1);
    // Catching up a wider binding from before the batch: what call.*.call1 delivered is not repeated.
    const reply = await client.request({ action: "subscribe", data: { account_id: accountId, binding: "call.CHANNEL_CREATE.*", since: start } });
    expect(reply).toMatchObject({ status: "success", data: { complete: true } });
    await client.ping();
    expect(seen(client.events)).toEqual([...CALL1, "call.CHANNEL_CREATE.call2 CHANNEL_CREATE"]);
    expect(client.events.at(-1)?.subscribed_key).toBe("call.CHANNEL_CREATE.*");
  });

  it("loses and repeats nothing when events keep coming while the catch-up is sent", async () => {
    const binding = "callq.session.*";
    const since = api.server.events.bus.lastSeq;
    const pad = "p".repeat(1024);
    const expected: number[] = [];
    // More than the log keeps in memory (10,000), so the catch-up reads its files while live
    // events come; and more than the send buffer holds, so it is paced by the client's reading.
    for (let i = 0; i < 6_000; i++) {
      expected.push(publish(`callq.session.backlog${i}`, "offer", { pad }).seq);
      publish(`callq.queue.q${i}`, "join");
    }
    let publishing = true;
    const publisher = (async () => {
      for (let i = 0; publishing; i++) {
        expected.push(publish(`callq.session.live${i}`, "offer", { pad }).seq);
        publish(`callq.recipient.r${i}`, "ready");
        await new Promise((r) => setImmediate(r));
      }
    })();
    const client = await connect();
    const reply = await client.subscribe(accountId, binding, { auth_token: token, since });
    expect(reply.status).toBe("success");
    await client.waitForEvents(6_100, 30_000);
    publishing = false;
    await publisher;
    await client.ping();

    const seqs = client.events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(seqs).toEqual(expected);
    expect(expected.length).toBeGreaterThan(6_100);
  });
});

describe("event websocket: slow clients", () => {
  it("tells a client that stopped reading and disconnects it, while the others keep up", async () => {
    const slow = await subscribed("call.CHANNEL_CREATE.*");
    const fast = await subscribed("call.CHANNEL_CREATE.*");
    slow.socket.pause();
    const big = "x".repeat(64 * 1024);
    const count = 400;
    for (let i = 0; i < count; i++) {
      publish(`call.CHANNEL_CREATE.big${i}`, "CHANNEL_CREATE", { big });
      // Let the readers read between events: they share this process with the server.
      await new Promise((r) => setImmediate(r));
    }
    await fast.waitForEvents(count, 30_000);
    expect(await fast.ping()).toMatchObject({ response: "pong" });
    expect(fast.events.map((e) => e.routing_key)).toEqual(Array.from({ length: count }, (_, i) => `call.CHANNEL_CREATE.big${i}`));

    slow.socket.resume();
    const closed = await slow.closed;
    expect(closed.code).toBe(4008);
    expect(slow.received.at(-1)).toEqual({ action: "error", data: { errors: ["too slow: disconnected"] } });
    expect(slow.events.length).toBeLessThan(count);
    // What it did get came in order, without gaps, up to where it fell behind.
    expect(slow.events.map((e) => e.routing_key)).toEqual(Array.from({ length: slow.events.length }, (_, i) => `call.CHANNEL_CREATE.big${i}`));

    const after = await subscribed("call.CHANNEL_CREATE.*");
    publish("call.CHANNEL_CREATE.after", "CHANNEL_CREATE");
    await after.ping();
    expect(seen(after.events)).toEqual(["call.CHANNEL_CREATE.after CHANNEL_CREATE"]);
  });
});

describe("event websocket: the classic port and the guard", () => {
  const upgrade = (url: string, headers: Record<string, string>): Promise<number> => EventsClient.upgradeStatus(url, headers);

  it("speaks the same protocol on the events port, at / and /events", async () => {
    const port = api.server.eventsPort;
    expect(port).toEqual(expect.any(Number));
    for (const path of ["/", "/events"]) {
      const client = await connect(`ws://127.0.0.1:${String(port)}${path}`);
      expect((await client.subscribe(accountId, "callq.queue.*", { auth_token: token })).status).toBe("success");
      publishBatch();
      await client.ping();
      expect(seen(client.events)).toEqual(QUEUES);
    }
  });

  it("guards Host and Origin on both listeners, and lets the console's own origin reach the events port", async () => {
    const port = api.server.eventsPort ?? 0;
    const main = api.server.port;
    for (const url of [eventsUrl, `ws://127.0.0.1:${port}/`]) {
      expect(await upgrade(url, { Host: "evil.example" })).toBe(421);
      expect(await upgrade(url, { Origin: "http://evil.example" })).toBe(403);
      expect(await upgrade(url, { Origin: `http://evil.example:${main}` })).toBe(403);
      expect(await upgrade(url, { Origin: `http://127.0.0.1:${main}` })).toBe(101);
    }
    expect(await upgrade(`ws://127.0.0.1:${port}/`, { Host: `127.0.0.1:${main}` })).toBe(421);
    expect(await upgrade(`ws://127.0.0.1:${port}/`, { Origin: `http://localhost:${port}` })).toBe(101);
  });

  it("takes the port from --events-port", () => {
    const defaults: ServerConfig = { host: "127.0.0.1", port: 8000, portExplicit: false, dataDir: "/d", assetsDir: "/a", rendererDir: null, demo: true, allowOrigins: [], logLevel: "info" };
    expect(parseArgs([], defaults).eventsPort).toBeUndefined();
    expect(parseArgs(["--events-port", "0"], defaults).eventsPort).toBe(0);
    expect(parseArgs(["--events-port=6000"], defaults)).toMatchObject({ eventsPort: 6000, port: 8000, portExplicit: false });
    expect(() => parseArgs(["--events-port", "99999"], defaults)).toThrow("--events-port must be 0..65535, not 99999");
  });

  it("goes on without the events port when it is taken, with a warning", async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const address = taken.address();
    const busy = typeof address === "object" && address ? address.port : 0;
    const warnings: string[] = [];
    const dataDir = await mkdtemp(join(tmpdir(), "sb-events-port-"));
    const server = await startServer(
      localServerConfig(dataDir, { eventsPort: busy, demo: false, logLevel: "warn", logger: pino({ level: "warn" }, { write: (line: string) => warnings.push(line) }) }),
    )
    try {
      expect(server.eventsPort).toBeNull();
      expect(warnings.join("")).toContain(`event websocket port ${busy} is unavailable`);
      const client = await EventsClient.connect(`${server.url.replace(/^http/, "ws")}/events`);
      expect(await client.ping()).toMatchObject({ response: "pong" });
      await client.close();
    } finally {
      await server.close();
      await new Promise((resolve) => taken.close(resolve));
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
