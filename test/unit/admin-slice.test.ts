// The admin slice through the whole store, with a fake admin API and a manual clock: the
// privilege check, devices with registrations read on the clock's timer and Sync, blocklists and
// the account's lists in force, webhooks (validation before any request, re-enable, attempts),
// and queue membership, including a server without the queues API.
import { describe, expect, it } from "vitest";
import type { AdminApi, Blocklist, MembershipAction, Webhook, WebhookAttempt } from "../../renderer/api/admin.js";
import type { PlatformEvent } from "../../renderer/api/events.js";
import { ApiRequestError } from "../../renderer/api/client.js";
import { privilegeOf } from "../../renderer/state/admin.js";
import { ACCOUNT_ID, consoleStore, deferred, OWNER_ID } from "../helpers/console-store.js";

const httpError = (status: number, data: unknown = null) => new ApiRequestError("http", status, "", data, null, `answered ${status}`);

/** An admin API over in-memory data; `calls` records what was asked, `fail` makes one method throw. */
function fakeAdminApi() {
  const calls: string[] = [];
  const failing = new Map<keyof AdminApi, unknown>();
  const state = {
    privLevel: "admin" as "admin" | "user",
    registered: ["d1"],
    blocklists: new Map<string, Blocklist>(),
    applied: [] as string[],
    hooks: new Map<string, Webhook>([["h1", { id: "h1", name: "Dead", hook: "channel_create", uri: "http://x.test/", http_verb: "post", retries: 2, enabled: false, format: "form-data", disable_reason: "too many failed attempts" }]]),
    attempts: [{ hook_id: "h1", result: "failure", reason: "timeout" }, { hook_id: "h2", result: "success" }] as WebhookAttempt[],
    members: new Map<string, string[]>([["q1", ["u1"]], ["q2", []]]),
    changes: [] as [string, MembershipAction, string[]][],
  };
  let nextId = 0;
  const guard = (name: keyof AdminApi) => {
    calls.push(name);
    if (failing.has(name)) throw failing.get(name);
  };
  const api: AdminApi = {
    async user(_c, id) {
      guard("user");
      return { id, priv_level: state.privLevel };
    },
    async users() {
      guard("users");
      return [{ id: "u1", first_name: "Alex", last_name: "Agent", username: "agent1" }, { id: "u2", username: "agent2" }];
    },
    async devices() {
      guard("devices");
      return [{ id: "d2", name: "zeta phone", owner_id: "u2" }, { id: "d1", name: "alpha phone", owner_id: "u1" }];
    },
    async deviceRegistrations() {
      guard("deviceRegistrations");
      return state.registered.map((device_id) => ({ device_id, registered: true }));
    },
    async syncDevice() {
      guard("syncDevice");
    },
    async blocklists() {
      guard("blocklists");
      return [...state.blocklists.values()].map((b) => ({ id: b.id ?? "", name: b.name }));
    },
    async blocklist(_c, id) {
      guard("blocklist");
      const list = state.blocklists.get(id);
      if (!list) throw httpError(404);
      return list;
    },
    async saveBlocklist(_c, list) {
      guard("saveBlocklist");
      const saved = { ...list, id: list.id ?? `b${++nextId}` };
      state.blocklists.set(saved.id, saved);
      return saved;
    },
    async deleteBlocklist(_c, id) {
      guard("deleteBlocklist");
      state.blocklists.delete(id);
    },
    async appliedBlocklists() {
      guard("appliedBlocklists");
      return [...state.applied];
    },
    async setAppliedBlocklists(_c, ids) {
      guard("setAppliedBlocklists");
      state.applied = [...ids];
      return [...ids];
    },
    async hookKinds() {
      guard("hookKinds");
      return [{ id: "channel_create" }, { id: "notifications" }];
    },
    async webhooks() {
      guard("webhooks");
      return [...state.hooks.values()].map((h) => ({ id: h.id ?? "", name: h.name, hook: h.hook, enabled: h.enabled, ...(h.disable_reason ? { disable_reason: h.disable_reason } : {}) }));
    },
    async webhook(_c, id) {
      guard("webhook");
      const hook = state.hooks.get(id);
      if (!hook) throw httpError(404);
      return hook;
    },
    async saveWebhook(_c, hook) {
      guard("saveWebhook");
      const saved = { ...hook, id: hook.id ?? `h${++nextId + 1}` };
      state.hooks.set(saved.id, saved);
      return saved;
    },
    async deleteWebhook(_c, id) {
      guard("deleteWebhook");
      state.hooks.delete(id);
    },
    async reenableWebhooks() {
      guard("reenableWebhooks");
      const again = [...state.hooks.values()].filter((h) => h.disable_reason !== undefined);
      for (const h of again) state.hooks.set(h.id ?? "", { ...h, enabled: true, disable_reason: undefined } as Webhook);
      return again.map((h) => ({ id: h.id ?? "", name: h.name }));
    },
    async webhookAttempts(_c, hookId) {
      guard("webhookAttempts");
      return state.attempts.filter((a) => hookId === null || a.hook_id === hookId);
    },
    async queues() {
      guard("queues");
      return [{ id: "q2", name: "Support" }, { id: "q1", name: "Sales" }];
    },
    async recipients() {
      guard("recipients");
      return [{ id: "u2", name: "agent2" }, { id: "u1", name: "agent1" }];
    },
    async queueMembership() {
      guard("queueMembership");
      return [...state.members.entries()].map(([queue_id, members]) => ({ queue_id, members: [...members] }));
    },
    async changeMembership(_c, queueId, action, members) {
      guard("changeMembership");
      state.changes.push([queueId, action, members]);
    },
  };
  return { api, calls, state, fail: (name: keyof AdminApi, error: unknown) => failing.set(name, error), heal: (name: keyof AdminApi) => failing.delete(name) };
}

async function setup(username = "admin") {
  const fake = fakeAdminApi();
  const { store, clock, signIn } = consoleStore({ adminApi: fake.api });
  await signIn(username);
  return { store, clock, signIn, ...fake };
}

describe("admin slice: privilege", () => {
  it("comes from the signed-in user's profile when the console has read it", async () => {
    const { store, calls } = await setup();
    const profile = { id: OWNER_ID, username: "admin", firstName: "Ada", lastName: "Admin", isAdmin: true, canMonitor: true, isTrainer: true, presenceId: "1001" };
    store.setState({ profile });
    expect(privilegeOf(store.getState())).toBe("admin");
    expect(await store.getState().checkPrivilege()).toBe("admin");
    store.setState({ profile: { ...profile, isAdmin: false } });
    expect(privilegeOf(store.getState())).toBe("user");
    // A profile of someone else (an earlier session's) says nothing about this one.
    store.setState({ profile: { ...profile, id: "c".repeat(32) } });
    expect(privilegeOf(store.getState())).toBe("unknown");
    expect(calls).not.toContain("user");
  });

  it("is asked of the server without a profile, once per session", async () => {
    const { store, calls } = await setup();
    expect(privilegeOf(store.getState())).toBe("unknown");
    expect(await store.getState().checkPrivilege()).toBe("admin");
    expect(privilegeOf(store.getState())).toBe("admin");
    await store.getState().checkPrivilege();
    expect(calls.filter((c) => c === "user")).toHaveLength(1);
    store.getState().signOut();
    expect(privilegeOf(store.getState())).toBe("unknown");
  });

  it("says user for a non-admin, and error when the user cannot be read", async () => {
    const { store, state, fail } = await setup("agent1");
    state.privLevel = "user";
    expect(await store.getState().checkPrivilege()).toBe("user");
    fail("user", httpError(500));
    expect(await store.getState().checkPrivilege(true)).toBe("error");
    expect(privilegeOf(store.getState())).toBe("error");
  });

  it("belongs to one session: a late answer for a signed-out admin does not make the next user an admin", async () => {
    const fake = fakeAdminApi();
    const answers: ReturnType<typeof deferred<{ id: string; priv_level: "admin" | "user" }>>[] = [];
    fake.api.user = () => {
      const answer = deferred<{ id: string; priv_level: "admin" | "user" }>();
      answers.push(answer);
      return answer.promise;
    };
    const { store, signIn } = consoleStore({ adminApi: fake.api });
    await signIn("admin");
    const late = store.getState().checkPrivilege();
    store.getState().signOut();
    await signIn("agent1");
    const current = store.getState().checkPrivilege();
    expect(answers).toHaveLength(2);
    expect(privilegeOf(store.getState())).toBe("checking");
    answers[0]?.resolve({ id: "admin", priv_level: "admin" });
    await late;
    expect(privilegeOf(store.getState())).toBe("checking");
    answers[1]?.resolve({ id: "agent1", priv_level: "user" });
    await current;
    expect(privilegeOf(store.getState())).toBe("user");
  });
});

describe("admin slice: devices", () => {
  it("lists devices by name with their owners and which are registered", async () => {
    const { store, clock } = await setup();
    await store.getState().loadDevices();
    const devices = store.getState().devices;
    expect(devices.rows.map((d) => d.id)).toEqual(["d1", "d2"]);
    expect(devices.owners).toEqual({ u1: "Alex Agent", u2: "agent2" });
    expect(devices.registered).toEqual({ d1: true });
    expect(devices.checkedAt).toBe(clock.now());
  });

  it("reads registrations again on the clock's timer while watched, and stops when the watch ends", async () => {
    const { store, clock, state, calls } = await setup();
    const stop = store.getState().watchRegistrations(5000);
    await clock.advance(0);
    const reads = () => calls.filter((c) => c === "deviceRegistrations").length;
    expect(reads()).toBe(1);
    state.registered = ["d1", "d2"];
    await clock.advance(4999);
    expect(reads()).toBe(1);
    await clock.advance(1);
    expect(reads()).toBe(2);
    expect(store.getState().devices.registered).toEqual({ d1: true, d2: true });
    stop();
    await clock.advance(60_000);
    expect(reads()).toBe(2);
    expect(clock.pending()).toBe(0);
  });

  it("reads registrations again at once when a phone registers or leaves", async () => {
    const { store, clock, state, calls } = await setup();
    const listeners: ((event: PlatformEvent) => void)[] = [];
    store.setState({
      onPlatformEvent: (listener) => {
        listeners.push(listener);
        return () => listeners.splice(listeners.indexOf(listener), 1);
      },
    });
    const stop = store.getState().watchRegistrations(60_000);
    await clock.advance(0);
    const reads = () => calls.filter((c) => c === "deviceRegistrations").length;
    expect(reads()).toBe(1);
    const event = (routingKey: string): PlatformEvent => ({ name: "x", routingKey, accountId: ACCOUNT_ID, seq: 1, data: {} });
    state.registered = [];
    for (const listener of [...listeners]) listener(event("notification.deregister.d1"));
    await clock.advance(0);
    expect(reads()).toBe(2);
    expect(store.getState().devices.registered).toEqual({});
    for (const listener of [...listeners]) listener(event("call.CHANNEL_CREATE.abc"));
    await clock.advance(0);
    expect(reads()).toBe(2);
    stop();
    expect(listeners).toHaveLength(0);
  });

  it("sends Sync and says whether it went", async () => {
    const { store, fail } = await setup();
    expect(await store.getState().syncDevice("d1")).toBe(true);
    expect(store.getState().devices.sync).toEqual({ d1: "sent" });
    fail("syncDevice", httpError(403));
    expect(await store.getState().syncDevice("d2")).toBe(false);
    expect(store.getState().devices.sync).toEqual({ d1: "sent", d2: "failed" });
    expect(store.getState().devices.error).toBe("Sync was not sent: only an admin may do this.");
  });
});

describe("admin slice: blocklists", () => {
  it("refuses a nameless list without asking the server", async () => {
    const { store, calls } = await setup();
    expect(await store.getState().saveBlocklist({ name: "  ", numbers: {}, should_block_anonymous: false })).toBe("Give the blocklist a name.");
    expect(calls).not.toContain("saveBlocklist");
  });

  it("creates, puts in force, edits and deletes a list; deleting takes it out of force too", async () => {
    const { store, state } = await setup();
    expect(await store.getState().saveBlocklist({ name: " Spam ", numbers: { "+14155550100": {} }, should_block_anonymous: true })).toBeNull();
    const row = store.getState().blocklists.rows[0];
    expect(row?.name).toBe("Spam");
    const id = row?.id ?? "";
    expect(store.getState().blocklists.notice).toBe("Blocklist “Spam” saved.");

    const applying = store.getState().setBlocklistApplied(id, true);
    expect(store.getState().blocklists.applied).toEqual([id]);
    expect(await applying).toBe(true);
    expect(state.applied).toEqual([id]);
    expect(store.getState().blocklists.applied).toEqual([id]);

    const read = await store.getState().readBlocklist(id);
    if (typeof read === "string") throw new Error(read);
    expect(await store.getState().saveBlocklist({ ...read, name: "Spam 2" })).toBeNull();
    expect(state.blocklists.get(id)?.name).toBe("Spam 2");

    expect(await store.getState().deleteBlocklist(id)).toBe(true);
    expect(store.getState().blocklists.rows).toEqual([]);
    expect(store.getState().blocklists.applied).toEqual([]);
    expect(await store.getState().readBlocklist(id)).toBe("The blocklist could not be read: it no longer exists (someone may have deleted it).");
  });

  it("puts the in-force box back when the account cannot be changed", async () => {
    const { store, fail } = await setup();
    await store.getState().saveBlocklist({ name: "Spam", numbers: {}, should_block_anonymous: false });
    const id = store.getState().blocklists.rows[0]?.id ?? "";
    fail("setAppliedBlocklists", httpError(403));
    expect(await store.getState().setBlocklistApplied(id, true)).toBe(false);
    expect(store.getState().blocklists.applied).toEqual([]);
    expect(store.getState().blocklists.error).toBe("The account was not changed: only an admin may do this.");
  });

  it("names the field the server refused", async () => {
    const { store, fail } = await setup();
    fail("saveBlocklist", httpError(400, { "numbers.12": { e164: { message: "Value is not a valid phone number" } } }));
    expect(await store.getState().saveBlocklist({ name: "Bad", numbers: { "12": {} }, should_block_anonymous: false })).toBe(
      "The blocklist was not saved: the server refused it: numbers.12: Value is not a valid phone number.",
    );
  });
});

describe("admin slice: webhooks", () => {
  const hook: Webhook = { name: "Calls", hook: "channel_create", uri: "https://hooks.test/in", http_verb: "post", retries: 2, enabled: true, format: "json" };

  it("checks the name, event, address and notification type before any request", async () => {
    const { store, calls } = await setup();
    expect(await store.getState().saveWebhook({ ...hook, name: "" })).toBe("Give the webhook a name.");
    expect(await store.getState().saveWebhook({ ...hook, uri: "ftp://x" })).toBe("Enter the address to call as http://… or https://….");
    expect(await store.getState().saveWebhook({ ...hook, hook: "notifications" })).toBe("Choose the notification type.");
    expect(calls).not.toContain("saveWebhook");
    expect(await store.getState().saveWebhook({ ...hook, hook: "notifications", custom_data: { type: "missed_call" } })).toBeNull();
  });

  it("lists hooks with the catalogue, re-enables the disabled ones and says which", async () => {
    const { store } = await setup();
    await store.getState().loadWebhooks();
    expect(store.getState().webhooks.kinds.map((k) => k.id)).toEqual(["channel_create", "notifications"]);
    expect(store.getState().webhooks.rows[0]).toMatchObject({ id: "h1", enabled: false, disable_reason: "too many failed attempts" });
    expect(await store.getState().reenableWebhooks()).toBe(true);
    expect(store.getState().webhooks.notice).toBe("Re-enabled: Dead.");
    expect(store.getState().webhooks.rows[0]).toMatchObject({ id: "h1", enabled: true });
    expect(await store.getState().reenableWebhooks()).toBe(true);
    expect(store.getState().webhooks.notice).toBe("No webhook was disabled.");
  });

  it("shows the attempts of every hook or of one, and only the answer for the hook still chosen", async () => {
    const fake = fakeAdminApi();
    const slow = deferred<WebhookAttempt[]>();
    const real = fake.api.webhookAttempts;
    fake.api.webhookAttempts = (c, id) => (id === "h1" ? slow.promise : real(c, id));
    const { store, signIn } = consoleStore({ adminApi: fake.api });
    await signIn();
    const first = store.getState().loadAttempts("h1");
    await store.getState().loadAttempts(null);
    expect(store.getState().attempts.rows).toHaveLength(2);
    slow.resolve([{ hook_id: "h1", result: "failure" }]);
    await first;
    expect(store.getState().attempts).toMatchObject({ hookId: null, loading: false });
    expect(store.getState().attempts.rows).toHaveLength(2);
  });
});

describe("admin slice: queue membership", () => {
  it("shows queues and recipients by name with their members, and adds and removes one at a time", async () => {
    const { store, state } = await setup();
    await store.getState().loadMembership();
    const m = store.getState().membership;
    expect(m.queues.map((q) => q.name)).toEqual(["Sales", "Support"]);
    expect(m.recipients.map((r) => r.name)).toEqual(["agent1", "agent2"]);
    expect(m.members).toEqual({ q1: ["u1"], q2: [] });

    expect(await store.getState().setMembership("q2", "u1", true)).toBe(true);
    expect(await store.getState().setMembership("q1", "u1", false)).toBe(true);
    expect(state.changes).toEqual([
      ["q2", "add", ["u1"]],
      ["q1", "remove", ["u1"]],
    ]);
    expect(store.getState().membership.members).toEqual({ q1: [], q2: ["u1"] });
    expect(store.getState().membership.pending).toEqual([]);
  });

  it("says so when the server has no queues API, and keeps membership when a change fails", async () => {
    const { store, fail, heal } = await setup();
    fail("queues", httpError(404));
    await store.getState().loadMembership();
    expect(store.getState().membership.error).toBe("This server does not offer call queues (no /callq_queues).");
    heal("queues");
    await store.getState().loadMembership();
    expect(store.getState().membership.error).toBeNull();
    fail("changeMembership", httpError(400, { members: { not_found: { message: "not a recipient" } } }));
    const change = store.getState().setMembership("q1", "u2", true);
    // Shown at once, while the server is asked.
    expect(store.getState().membership.members.q1).toEqual(["u1", "u2"]);
    expect(store.getState().membership.pending).toEqual(["q1:u2"]);
    expect(await change).toBe(false);
    expect(store.getState().membership.members.q1).toEqual(["u1"]);
    expect(store.getState().membership.error).toBe("Membership was not changed: the server refused it: members: not a recipient.");
  });
});
