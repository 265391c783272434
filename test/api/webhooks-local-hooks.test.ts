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
    expect(local.sort()).toEqual(["callq_queue_alert", "callq_queue_callback", "callq_recipient_disposition", "training_run", "user_presence"]);
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

  it("training_run: a live run's start, pause, resume, a fault by the trainer's hand and its end reach the receiver, in order", async () => {
    await hook("training_run", "/training");
    const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin.token, query: { paginate: "false" } });
    const sales = queues.body.data.find((q) => q.name === "Sales");
    const persona = { name: "Nobody", weight: 1, number: "+1415777####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 3 } };
    const scenario = await api.call<{ id: string }>("PUT", `${base}/training_scenarios`, {
      token: admin.token,
      data: { name: "Hooked run", duration_s: 600, seed: 1, queues: [{ queue_id: sales?.id, rate_per_hour: 0 }], personas: [persona] },
    });
    expect(scenario.status, scenario.text).toBe(201);
    const started = await api.call<{ id: string }>("POST", `${base}/training_scenarios/${scenario.body.data.id}/runs`, { token: admin.token });
    expect(started.status, started.text).toBe(201);
    const run = `${base}/training_runs/${started.body.data.id}`;
    for (const data of [{ action: "pause" }, { action: "resume" }, { action: "fault", fault: { kind: "drop_registration", target: agent.ownerId } }, { action: "stop" }]) {
      const res = await api.call("POST", run, { token: admin.token, data });
      expect(res.status, res.text).toBe(200);
    }
    const ofRun = () => receiver.at("/training").filter((b) => b.run_id === started.body.data.id);
    const ended = await poll("the run's end delivered", async () => ofRun().find((b) => b.run_event === "ended"));
    expect(ended).toMatchObject({ hook_event: "training_run", account_id: admin.accountId, run_id: started.body.data.id });
    expect(Number(ended.at_s)).toBeGreaterThanOrEqual(0);
    expect(ofRun().map((b) => b.run_event)).toEqual(["started", "paused", "resumed", "fault_injected", "ended"]);
    const fault = ofRun().find((b) => b.run_event === "fault_injected");
    expect(fault).toMatchObject({ source: "trainer" });
    expect(JSON.parse(fault?.fault ?? "{}")).toMatchObject({ kind: "drop_registration", target: agent.ownerId });
    // The contract lists the hook and its steps.
    const asyncapi = (await (await fetch(`${api.url}/v2/asyncapi.json`)).json()) as { channels: { webhooks: { messages: Record<string, { payload: { properties: Record<string, { enum?: string[] }> } }> } } };
    expect(asyncapi.channels.webhooks.messages.training_run?.payload.properties.run_event?.enum).toEqual(expect.arrayContaining(["started", "paused", "ended", "fault_injected"]));
  });
});
