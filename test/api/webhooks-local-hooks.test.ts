// The catalogue's local hooks (issues 19 and 20) over real HTTP: listed and marked as local
// additions beside the hosted service's hooks, which stay as they were; a user's presence change
// and a queue alert firing and clearing each reach a receiver in the hook's payload. (The
// disposition hook is tested with a real queue call in callq-dispositions.test.ts.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";

let api: TestApi;
let receiver: HookReceiver;
let admin: { token: string; accountId: string };
let agent: { token: string; ownerId: string };
let base: string;

beforeAll(async () => {
  api = await startApi();
  receiver = await HookReceiver.start();
  admin = await api.login("admin");
  agent = await api.login("agent1");
  base = `/v2/accounts/${admin.accountId}`;
});
afterAll(async () => {
  await api?.close();
  await receiver?.close();
});

async function hook(name: string, path: string): Promise<void> {
  const res = await api.call("PUT", `${base}/webhooks`, { token: admin.token, data: { name, hook: name, uri: `${receiver.url}${path}` } });
  expect(res.status, res.text).toBe(201);
}

describe("local hooks", () => {
  it("are listed as local additions; the hosted service's hooks carry no such mark", async () => {
    const res = await api.call<{ id: string; local_addition?: boolean }[]>("GET", "/v2/webhooks", { token: admin.token });
    expect(res.status, res.text).toBe(200);
    const local = res.body.data.filter((h) => h.local_addition === true).map((h) => h.id);
    expect(local.sort()).toEqual(["callq_queue_alert", "callq_queue_callback", "callq_recipient_disposition", "user_presence"]);
    for (const kazoo of ["channel_create", "channel_destroy", "object", "notifications", "callq_recipient_away"]) {
      expect(res.body.data.find((h) => h.id === kazoo), kazoo).not.toHaveProperty("local_addition");
    }
  });

  it("user_presence: a colleague's do not disturb reaches the receiver with the user and the presence (offline outranks it: no phone)", async () => {
    await hook("user_presence", "/presence");
    const prefs = `${base}/users/${agent.ownerId}/preferences`;
    expect((await api.call("PATCH", prefs, { token: agent.token, data: { do_not_disturb: { enabled: true } } })).status).toBe(200);
    const delivered = await poll("the presence webhook", async () => receiver.at("/presence").find((b) => b.user_id === agent.ownerId && b.do_not_disturb === "true"));
    expect(delivered).toMatchObject({ hook_event: "user_presence", account_id: admin.accountId, presence: "offline", registered: "false", name: expect.any(String) });
    expect(delivered.timestamp).toMatch(/^\d+$/);
    expect((await api.call("PATCH", prefs, { token: agent.token, data: { do_not_disturb: { enabled: false } } })).status).toBe(200);
    await poll("presence back", async () => receiver.at("/presence").find((b) => b.user_id === agent.ownerId && b.do_not_disturb === "false"));
  });

  it("callq_queue_alert: a member Away past the queue's limit fires it, logging out clears it, each once", async () => {
    await hook("callq_queue_alert", "/alert");
    const queue = await api.call<{ id: string }>("PUT", `${base}/callq_queues`, { token: admin.token, data: { name: "Hooked", alerts: { state_limits: { Away: 1 } } } });
    expect(queue.status, queue.text).toBe(201);
    const queueId = queue.body.data.id;
    const members = await api.call("POST", `${base}/callq_queues/${queueId}/recipients`, { token: admin.token, data: { action: "set", members: [agent.ownerId] } });
    expect(members.status, members.text).toBe(200);
    const status = `${base}/callq_recipients/${agent.ownerId}/status`;
    expect((await api.call("POST", status, { token: agent.token, data: { status: "login" } })).status).toBe(200);

    const fired = await poll("the alert fired", async () => receiver.at("/alert").find((b) => b.alert === "fire" && b.queue_id === queueId));
    expect(fired).toMatchObject({ hook_event: "callq_queue_alert", queue_name: "Hooked", kind: "state_too_long", recipient_id: agent.ownerId, availability_state: "Away", limit: "1" });
    expect(Number(fired.value)).toBeGreaterThan(1);

    expect((await api.call("POST", status, { token: agent.token, data: { status: "logout" } })).status).toBe(200);
    const cleared = await poll("the alert cleared", async () => receiver.at("/alert").find((b) => b.alert === "clear" && b.queue_id === queueId));
    expect(cleared).toMatchObject({ hook_event: "callq_queue_alert", kind: "state_too_long", recipient_id: agent.ownerId });
    expect(receiver.at("/alert").filter((b) => b.queue_id === queueId).map((b) => b.alert)).toEqual(["fire", "clear"]);
  });
});
