// Faults on cue in live training runs (issue 18 item 5), on a started server with real werift
// legs, a real registrar over SIP WebSocket and a real webhook receiver: the trainer's burst adds
// callers at once; a dropped registration takes the trainee's phone off /devices/status until it
// registers again; a webhook failure window fails deliveries without a request, logged with their
// reason, and ends; a persona's STOP text opts its contact out; a scenario's fault fires at its time on the run clock, and a pause holds it.
// Refusals: who may, bad faults (the field named), a run not running (409).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine } from "../../server/media/index.js";
import { FAULT_REASON } from "../../server/events/webhook-faults.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { FakeSignalling, sleep } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { newDevice, SipPhone, SipSocket } from "../helpers/sip-client.js";
import { HookReceiver } from "../helpers/webhook-receiver.js";
import { textingUser } from "../texting/texting-client.js";

interface TimelineEntry {
  name: string;
  at_s: number;
  source?: string;
  applied?: boolean;
  callers?: number[];
  devices?: string[];
  fault?: { kind: string };
}
interface RunDoc {
  id: string;
  status: string;
  callers: { index: number; state: string }[];
  timeline: TimelineEntry[];
}

const media = new MediaEngine({ maxSendLatenessMs: Infinity });
const signalling = new FakeSignalling(media);
let api: TestApi;
let admin: string;
let accountId: string;
let base: string;
let salesId: string;
let receiver: HookReceiver;
const sockets: SipSocket[] = [];

beforeAll(async () => {
  api = await startApi({ config: { callSignalling: signalling } });
  ({ token: admin, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}`;
  const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  salesId = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
  receiver = await HookReceiver.start();
});
afterAll(async () => {
  for (const socket of sockets) await socket.close();
  await api?.close();
  await media.close();
  await receiver?.close();
});

const persona = { name: "Burst Caller", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 5 } };

/** A run of a scenario with no callers of its own unless `extra` says so; the run's id. */
async function startRun(extra: Record<string, unknown> = {}): Promise<string> {
  const created = await api.call<{ id: string }>("PUT", `${base}/training_scenarios`, {
    token: admin,
    data: { name: `Faults ${Math.random()}`, duration_s: 60, seed: 5, queues: [{ queue_id: salesId, rate_per_hour: 0 }], personas: [persona], ...extra },
  });
  expect(created.status, created.text).toBe(201);
  const started = await api.call<RunDoc>("POST", `${base}/training_scenarios/${created.body.data.id}/runs`, { token: admin });
  expect(started.status, started.text).toBe(201);
  return started.body.data.id;
}

const readRun = async (id: string): Promise<RunDoc> => (await api.call<RunDoc>("GET", `${base}/training_runs/${id}`, { token: admin })).body.data;
const act = (id: string, data: Record<string, unknown>, token = admin) => api.call<Record<string, Record<string, unknown>>>("POST", `${base}/training_runs/${id}`, { token, data });
const registered = async (): Promise<string[]> => (await api.call<{ device_id: string }[]>("GET", `${base}/devices/status`, { token: admin })).body.data.map((d) => d.device_id);
const entries = (run: RunDoc, name: string): TimelineEntry[] => run.timeline.filter((e) => e.name === name);

async function stop(id: string): Promise<void> {
  const stopped = await act(id, { action: "stop" });
  expect(stopped.status, stopped.text).toBe(200);
}

describe("faults on cue in a live run", () => {
  it("a trainer's burst adds its callers at once, and they call", async () => {
    const id = await startRun();
    expect((await readRun(id)).callers).toHaveLength(0);
    const burst = await act(id, { action: "fault", fault: { kind: "burst", count: 3, target: salesId } });
    expect(burst.status, burst.text).toBe(200);
    const run = await readRun(id);
    expect(run.callers.map((c) => c.index)).toEqual([0, 1, 2]);
    expect(entries(run, "fault_injected")).toEqual([expect.objectContaining({ source: "trainer", applied: true, callers: [0, 1, 2], fault: { kind: "burst", count: 3, target: salesId } })]);
    await poll("three callers arrived", async () => (entries(await readRun(id), "caller_arrived").length === 3 ? true : undefined), 30_000);
    await stop(id);
  });

  it("a dropped registration takes the trainee's phone off /devices/status until it registers again", async () => {
    const trainee = await api.login("agent1");
    const device = await newDevice(api, { token: admin, accountId }, { owner_id: trainee.ownerId });
    const socket = await SipSocket.connect(api.url);
    sockets.push(socket);
    const phone = new SipPhone(socket, { ...device, realm: "demo.switchboard.local" });
    expect((await phone.register({ expires: 300 })).status).toBe(200);
    expect(await registered()).toContain(device.id);

    const id = await startRun();
    const drop = await act(id, { action: "fault", fault: { kind: "drop_registration", target: trainee.ownerId } });
    expect(drop.status, drop.text).toBe(200);
    expect(await registered()).not.toContain(device.id);
    const injected = entries(await readRun(id), "fault_injected");
    expect(injected).toEqual([expect.objectContaining({ applied: true, devices: [device.id] })]);
    expect(entries(await readRun(id), "fault_cleared")).toHaveLength(0);

    // The phone's next REGISTER (its refresh) puts it back, and the fault is cleared.
    expect((await phone.register({ expires: 300 })).status).toBe(200);
    expect(await registered()).toContain(device.id);
    expect(entries(await readRun(id), "fault_cleared")).toEqual([expect.objectContaining({ device_id: device.id })]);
    await stop(id);
    expect((await phone.unregister()).status).toBe(200);
  });

  it("a webhook failure window fails deliveries without a request, counted as attempts with the reason, and ends", async () => {
    const hook = await api.call<{ id: string }>("PUT", `${base}/webhooks`, {
      token: admin,
      data: { name: "faulted", hook: "object", uri: `${receiver.url}/faulted`, retries: 0, custom_data: { type: "device" } },
    });
    expect(hook.status, hook.text).toBe(201);
    const hookId = hook.body.data.id;
    const id = await startRun();
    const failing = await act(id, { action: "fault", fault: { kind: "webhook_failure", duration_s: 3 } });
    expect(failing.status, failing.text).toBe(200);
    await api.call("PUT", `${base}/devices`, { token: admin, data: { name: "made while failing" } });
    const attempts = async () => (await api.call<{ result: string; reason?: string }[]>("GET", `${base}/webhooks/${hookId}/attempts`, { token: admin })).body.data;
    const failed = await poll("a failed attempt", async () => {
      const all = await attempts();
      return all.length > 0 ? all : undefined;
    });
    expect(failed).toEqual([expect.objectContaining({ result: "failure", reason: FAULT_REASON })]);
    expect(receiver.at("/faulted")).toHaveLength(0);

    await poll("the window closed", async () => (entries(await readRun(id), "fault_cleared").length > 0 ? true : undefined), 20_000);
    await api.call("PUT", `${base}/devices`, { token: admin, data: { name: "made after" } });
    await poll("a delivery after the window", () => (receiver.at("/faulted").length > 0 ? true : undefined));
    expect(receiver.at("/faulted")).toEqual([expect.objectContaining({ action: "doc_created" })]);
    await stop(id);
    await api.call("DELETE", `${base}/webhooks/${hookId}`, { token: admin });
  });

  it("a STOP text from a persona's number opts that contact out of the trainee's texting number", async () => {
    const trainee = await textingUser(api, "agent1");
    const id = await startRun();
    const stopText = await act(id, { action: "fault", fault: { kind: "text_stop", target: trainee.number } });
    expect(stopText.status, stopText.text).toBe(200);
    const [injected] = entries(await readRun(id), "fault_injected") as (TimelineEntry & { from?: string; contact_id?: string })[];
    expect(injected).toMatchObject({ source: "trainer", applied: true });
    expect(injected?.from).toMatch(/^\+1415555\d{4}$/);
    const contact = (await api.server.store.account(accountId, "texting_contacts")).get(injected?.contact_id ?? "");
    expect(contact?.data).toMatchObject({ phoneNumber: injected?.from, optedOut: true, optOutKeyword: "STOP", user_id: trainee.userId });
    const notTexting = await act(id, { action: "fault", fault: { kind: "text_stop", target: "+14155550999" } });
    expect(notTexting.status, notTexting.text).toBe(400);
    expect(notTexting.body.data["fault.target"]?.texting_number).toBeDefined();
    await stop(id);
  });

  it("a scenario's fault fires at its time on the run clock: a pause holds it", async () => {
    const id = await startRun({ faults: [{ at_s: 2, kind: "webhook_failure", duration_s: 1 }] });
    expect((await act(id, { action: "pause" })).status).toBe(200);
    // Longer than the fault's time, paused: the run clock stands, so the fault does not come.
    await sleep(3000);
    expect(entries(await readRun(id), "fault_injected")).toHaveLength(0);
    expect((await act(id, { action: "resume" })).status).toBe(200);
    await poll("the scenario's fault", async () => (entries(await readRun(id), "fault_injected").length > 0 ? true : undefined), 20_000);
    const run = await readRun(id);
    const [injected] = entries(run, "fault_injected");
    expect(injected).toMatchObject({ source: "scenario", applied: true, fault: { kind: "webhook_failure", duration_s: 1 } });
    expect(injected?.at_s).toBeGreaterThanOrEqual(2);
    await poll("the fault cleared", async () => (entries(await readRun(id), "fault_cleared").length > 0 ? true : undefined), 20_000);
    await stop(id);
  });

  it("refuses bad faults with the field named, faults on a run not running with 409, and users who are not trainers with 403", async () => {
    const id = await startRun();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ action: "fault" }, "fault", "required"],
      [{ action: "fault", fault: { kind: "earthquake" } }, "fault.kind", "enum"],
      [{ action: "fault", fault: { kind: "burst" } }, "fault.count", "required"],
      [{ action: "fault", fault: { kind: "burst", count: 0 } }, "fault.count", "minimum"],
      [{ action: "fault", fault: { kind: "burst", count: 2, target: "+1999" } }, "fault.target", "enum"],
      [{ action: "fault", fault: { kind: "burst", count: 501 } }, "fault.count", "maximum"],
      [{ action: "fault", fault: { kind: "drop_registration" } }, "fault.target", "required"],
      [{ action: "fault", fault: { kind: "drop_registration", target: "f".repeat(32) } }, "fault.target", "not_found"],
      [{ action: "fault", fault: { kind: "one_way_audio" } }, "fault.target", "required"],
      [{ action: "fault", fault: { kind: "text_undelivered" } }, "fault.target", "required"],
      [{ action: "pause", fault: { kind: "burst", count: 1 } }, "fault", "action"],
    ];
    for (const [data, field, rule] of cases) {
      const res = await act(id, data);
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expect(res.body.data[field]?.[rule], `${field} ${rule}: ${res.text}`).toBeDefined();
    }
    const untouched = await readRun(id);
    expect(untouched.callers).toHaveLength(0);
    expect(untouched.status).toBe("running");
    expect(entries(untouched, "fault_injected")).toHaveLength(0);

    const agent = await api.login("agent1");
    expect((await act(id, { action: "fault", fault: { kind: "burst", count: 1 } }, agent.token)).status).toBe(403);

    expect((await act(id, { action: "pause" })).status).toBe(200);
    const paused = await act(id, { action: "fault", fault: { kind: "burst", count: 1 } });
    expect(paused.status, paused.text).toBe(409);
    await stop(id);
    const ended = await act(id, { action: "fault", fault: { kind: "burst", count: 1 } });
    expect(ended.status, ended.text).toBe(409);
    const after = await readRun(id);
    expect(after.callers).toHaveLength(0);
    expect(entries(after, "fault_injected")).toHaveLength(0);
  });
});
