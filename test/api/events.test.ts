// GET /v2/accounts/{id}/events: the REST catch-up on the event log, oldest first, in pages, one
// account's events only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/index.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let token: string;
let accountId: string;
let base: string;

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}/events`;
});
afterAll(async () => {
  await api.close();
});

function publish(routingKey: string, account = accountId): BusEvent {
  return api.server.events.bus.publish({ account_id: account, routing_key: routingKey, name: routingKey.split(".")[1] ?? "", data: { key: routingKey } });
}

describe("GET /v2/accounts/{id}/events", () => {
  it("pages through the account's events after since, oldest first, with next_start_key", async () => {
    const since = api.server.events.bus.lastSeq;
    const ours: BusEvent[] = [];
    for (let i = 0; i < 7; i++) {
      ours.push(publish(`call.CHANNEL_CREATE.page${i}`));
      publish(`call.CHANNEL_CREATE.elsewhere${i}`, "e".repeat(32));
    }

    const first = await api.call<BusEvent[]>("GET", base, { token, query: { since: String(since), page_size: "3" } });
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual(ours.slice(0, 3));
    expect(first.body).toMatchObject({ page_size: 3, start_key: String(ours[0]?.seq), next_start_key: String(ours[3]?.seq) });

    const second = await api.call<BusEvent[]>("GET", base, { token, query: { start_key: first.body.next_start_key ?? "", page_size: "3" } });
    expect(second.body.data.map((e) => e.seq)).toEqual(ours.slice(3, 6).map((e) => e.seq));

    // `since` is what a websocket client last saw: the same page as start_key one past it.
    const bySince = await api.call<BusEvent[]>("GET", base, { token, query: { since: String(ours[2]?.seq), page_size: "3" } });
    expect(bySince.body.data).toEqual(second.body.data);

    const last = await api.call<BusEvent[]>("GET", base, { token, query: { start_key: second.body.next_start_key ?? "", page_size: "3" } });
    expect(last.body.data).toEqual(ours.slice(6));
    expect(last.body.next_start_key).toBeUndefined();
    expect(last.headers.get("x-events-complete")).toBeNull();

    const beyond = await api.call<BusEvent[]>("GET", base, { token, query: { since: String(api.server.events.bus.lastSeq) } });
    expect(beyond.body).toMatchObject({ data: [], page_size: 0 });
  });

  it("pages by 50 by default and includes document events of API writes", async () => {
    const since = api.server.events.bus.lastSeq;
    const put = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/devices`, { token, data: { name: "events page phone" } });
    expect(put.status).toBe(201);
    for (let i = 0; i < 60; i++) publish(`callq.queue.q${i}`);
    const page = await api.call<BusEvent[]>("GET", base, { token, query: { since: String(since) } });
    expect(page.body.data).toHaveLength(50);
    expect(page.body.data[0]).toMatchObject({ routing_key: "object.doc_created.device", name: "doc_created", account_id: accountId, data: { id: put.body.data.id } });
    // The directory's presence follower may publish users' entries after a device write; every
    // other event of the page is ours, in order.
    const others = page.body.data.slice(1).filter((e) => !e.routing_key.startsWith("directory."));
    expect(others.map((e) => e.routing_key)).toEqual(Array.from({ length: others.length }, (_, i) => `callq.queue.q${i}`));
    expect(page.body.next_start_key).toBe(String((page.body.data[49]?.seq ?? 0) + 1));
  });

  it("refuses a since or start_key that is not a whole number, and a bad page_size", async () => {
    for (const since of ["abc", "-1", "1.5", ""]) {
      const res = await api.call("GET", base, { token, query: { since } });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ message: "validation error", data: { since: { type: { message: "since must be a whole number", value: since } } } });
    }
    expect((await api.call("GET", base, { token, query: { start_key: "x" } })).status).toBe(400);
    expect((await api.call("GET", base, { token, query: { page_size: "0" } })).body).toMatchObject({ message: "faulty_request" });
  });

  it("keeps accounts apart: another account's token is refused and its events never appear", async () => {
    const other = await createAccount(api, "eventsother");
    expect((await api.call("GET", base, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", base)).status).toBe(401);
    const since = api.server.events.bus.lastSeq;
    publish("call.CHANNEL_CREATE.theirs", other.accountId);
    const mine = await api.call<BusEvent[]>("GET", base, { token, query: { since: String(since) } });
    // (The directory may still be publishing this account's entries after the earlier device write.)
    expect(mine.body.data.filter((e) => !e.routing_key.startsWith("directory."))).toEqual([]);
    const theirs = await api.call<BusEvent[]>("GET", `/v2/accounts/${other.accountId}/events`, { token: other.token, query: { since: String(since) } });
    expect(theirs.body.data.map((e) => e.routing_key).filter((key) => !key.startsWith("directory."))).toEqual(["call.CHANNEL_CREATE.theirs"]);
  });
});
