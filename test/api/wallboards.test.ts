// Wallboards (issue 20, item 5): admins and supervisors make a board and get its key once; the key
// reads that board and is refused by every other route of the server (each one tried, so a route
// added later is covered too), binds no events, ends at its fixed expiry or with its board, and
// outlives its maker's password change. Agents are refused everything about wallboards.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";
import { EventsClient } from "../helpers/events-client.js";

const clock = new TestClock();
let api: TestApi;
let accountId: string;
let admin: string;
let supervisor: string;
let supervisorId: string;
let agent: string;
let boards: string;
let queues: { id: string; name: string }[];

beforeAll(async () => {
  api = await startApi({ clock });
  ({ token: admin, accountId } = await api.login("admin"));
  ({ token: supervisor, ownerId: supervisorId } = await api.login("supervisor"));
  ({ token: agent } = await api.login("agent1"));
  boards = `/v2/accounts/${accountId}/wallboards`;
  const listed = await api.call<{ id: string; name: string }[]>("GET", `/v2/accounts/${accountId}/callq_queues`, { token: admin });
  queues = listed.body.data;
  expect(queues.length).toBeGreaterThan(0);
});
afterAll(async () => {
  await api.close();
});

interface Made {
  id: string;
  key: string;
  page: string;
  name: string;
  queue_ids?: string[];
  expires: number;
  created_by: string | null;
}

async function make(token: string, data: Record<string, unknown>): Promise<Made> {
  const made = await api.call<Made>("PUT", boards, { token, data });
  expect(made.status, made.text).toBe(201);
  return made.body.data;
}

async function board(key: string, id: string): Promise<{ status: number; data: Record<string, unknown> }> {
  const read = await api.call<Record<string, unknown>>("GET", `${boards}/${id}/board`, { token: key });
  return { status: read.status, data: read.body.data };
}

async function count(): Promise<number> {
  return (await api.call<unknown[]>("GET", boards, { token: admin })).body.data.length;
}

describe("making wallboards", () => {
  it("gives an admin's board every queue, its key once, and a page address carrying it in the fragment", async () => {
    const made = await make(admin, { name: "Floor" });
    expect(made.key).toMatch(/^[0-9a-f]{64}$/);
    expect(made.page).toBe(`/wallboard.html#account=${accountId}&board=${made.id}&key=${made.key}`);
    const read = await api.call<Record<string, unknown>>("GET", `${boards}/${made.id}`, { token: admin });
    expect(read.status).toBe(200);
    expect(read.body.data).not.toHaveProperty("key");
    expect(read.body.data).not.toHaveProperty("key_id");
    expect(JSON.stringify((await api.call("GET", boards, { token: admin })).body)).not.toContain(made.key);
    const shown = await board(made.key, made.id);
    expect(shown.status).toBe(200);
    expect(shown.data.name).toBe("Floor");
    // The account's queue time, the server's own with no training run live.
    expect(shown.data.queue_clock).toEqual({ behind_ms: 0, paused: false });
    const names = (shown.data.queues as { name: string; waiting: number; longest_wait: number }[]).map((q) => q.name);
    expect(names).toEqual([...queues.map((q) => q.name)].sort((a, b) => a.localeCompare(b)));
    for (const q of shown.data.queues as { waiting: number; longest_wait: number; stats: Record<string, number> }[]) {
      expect(q.waiting).toBe(0);
      expect(q.longest_wait).toBe(0);
      expect(q.stats).toHaveProperty("answered_sessions");
    }
  });

  it("lets a supervisor make a board of chosen queues, in their order", async () => {
    const chosen = queues.map((q) => q.id).reverse();
    const made = await make(supervisor, { name: "Mine", queue_ids: chosen });
    expect(made.created_by).toBe(supervisorId);
    const shown = await board(made.key, made.id);
    expect((shown.data.queues as { id: string }[]).map((q) => q.id)).toEqual(chosen);
  });

  it("refuses bad input with the field named, and makes nothing", async () => {
    const before = await count();
    const cases: [Record<string, unknown>, string][] = [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x", queue_ids: ["0".repeat(32)] }, "queue_ids"],
      [{ name: "x", queue_ids: [] }, "queue_ids"],
      [{ name: "x", expires_in_days: 0 }, "expires_in_days"],
      [{ name: "x", expires_in_days: 366 }, "expires_in_days"],
      [{ name: "x", key: "f".repeat(64) }, "key"],
    ];
    for (const [data, field] of cases) {
      const refused = await api.call("PUT", boards, { token: admin, data });
      expect(refused.status, JSON.stringify(data)).toBe(400);
      expect(JSON.stringify(refused.body.data), JSON.stringify(data)).toContain(field);
    }
    expect(await count()).toBe(before);
  });

  it("refuses agents everything about wallboards", async () => {
    const made = await make(admin, { name: "Not for agents" });
    expect((await api.call("PUT", boards, { token: agent, data: { name: "x" } })).status).toBe(403);
    expect((await api.call("GET", boards, { token: agent })).status).toBe(403);
    expect((await api.call("GET", `${boards}/${made.id}`, { token: agent })).status).toBe(403);
    expect((await api.call("GET", `${boards}/${made.id}/board`, { token: agent })).status).toBe(403);
    expect((await api.call("DELETE", `${boards}/${made.id}`, { token: agent })).status).toBe(403);
    expect((await board(made.key, made.id)).status).toBe(200);
  });
});

describe("a wallboard's key", () => {
  it("is refused by every other route and verb of the server, and changes nothing", async () => {
    const made = await make(admin, { name: "Read only" });
    const other = await make(admin, { name: "Another" });
    const snapshot = async () =>
      JSON.stringify(
        await Promise.all(
          ["users", "devices", "callflows", "callq_queues", "wallboards", "webhooks", "blacklists"].map(async (c) => (await api.call("GET", `/v2/accounts/${accountId}/${c}`, { token: admin })).body.data),
        ),
      );
    const before = await snapshot();
    const fill = (url: string) =>
      url
        .replace(":account_id", accountId)
        .replace(/:id\b/, made.id)
        .replace(/:[a-z_]+/g, "0123456789abcdef0123456789abcdef")
        .replace("*", "x");
    let tried = 0;
    let refused = 0;
    for (const route of api.server.routes) {
      if (!route.url.startsWith("/v2/") || route.method === "HEAD" || route.method === "OPTIONS") continue;
      const url = fill(route.url);
      if (route.method === "GET" && route.url === "/v2/accounts/:account_id/wallboards/:id/board") continue;
      const data = route.method === "GET" ? undefined : {};
      const withKey = await api.call(route.method, url, { token: made.key, data });
      const withNone = await api.call(route.method, url, { token: null, data });
      tried++;
      if (withKey.status === 403 && withKey.text.includes("wallboard")) {
        refused++;
        continue;
      }
      // Otherwise a route that needs no token (sign-in, the contracts): the key adds nothing.
      expect(withNone.status, `${route.method} ${url}: ${withKey.status} ${withKey.text}`).not.toBe(401);
      expect(withKey.status, `${route.method} ${url}`).toBe(withNone.status);
    }
    expect(tried).toBeGreaterThan(100);
    expect(refused).toBeGreaterThan(tried * 0.9);
    expect((await board(made.key, other.id)).status).toBe(403);
    expect(await snapshot()).toBe(before);
    expect((await board(made.key, made.id)).status).toBe(200);
  });

  it("binds no events on the event websocket", async () => {
    const made = await make(admin, { name: "No events" });
    const client = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
    try {
      const reply = await client.subscribe(accountId, "callq.*", { auth_token: made.key });
      expect(reply.status).toBe("error");
      expect(JSON.stringify(reply.data)).toContain("wallboard");
    } finally {
      await client.close();
    }
  });

  it("ends at its fixed expiry however much it is used, and not before", async () => {
    const made = await make(admin, { name: "One day", expires_in_days: 1 });
    clock.advance(23 * 3600_000);
    expect((await board(made.key, made.id)).status).toBe(200);
    clock.advance(3600_000 - 1000);
    expect((await board(made.key, made.id)).status).toBe(200);
    clock.advance(2000);
    expect((await board(made.key, made.id)).status).toBe(401);
    // The board itself stays until someone deletes it (the admin's own token idled out meanwhile).
    ({ token: admin } = await api.login("admin"));
    expect((await api.call("GET", `${boards}/${made.id}`, { token: admin })).status).toBe(200);
  });

  it("outlives its maker's new password and the account's user tokens, and ends with its board", async () => {
    ({ token: admin } = await api.login("admin"));
    ({ token: supervisor } = await api.login("supervisor"));
    const made = await make(supervisor, { name: "Kept" });
    const changed = await api.call("PATCH", `/v2/accounts/${accountId}/users/${supervisorId}`, { token: admin, data: { password: "a-new-password-1" } });
    expect(changed.status, changed.text).toBe(200);
    expect((await board(made.key, made.id)).status).toBe(200);
    ({ token: supervisor } = await api.login("supervisor", "a-new-password-1"));
    const byAdmin = await make(admin, { name: "Admin's" });
    // A supervisor deletes only what they made; an admin any.
    expect((await api.call("DELETE", `${boards}/${byAdmin.id}`, { token: supervisor })).status).toBe(403);
    expect((await api.call("DELETE", `${boards}/${made.id}`, { token: supervisor })).status).toBe(200);
    expect((await board(made.key, made.id)).status).toBe(401);
    expect((await api.call("DELETE", `${boards}/${byAdmin.id}`, { token: admin })).status).toBe(200);
    expect((await board(byAdmin.key, byAdmin.id)).status).toBe(401);
    expect((await api.call("GET", `${boards}/${byAdmin.id}`, { token: admin })).status).toBe(404);
  });
});
