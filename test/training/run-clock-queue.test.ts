// The queue engine's timers of an account follow its live training run's clock (issue 18 item 4):
// on a started server whose clock is a ManualClock (real werift legs, fake phones), a paused run
// holds a waiting caller's connection timeout, an agent's ring timeout and their wrap-up countdown
// past their time on the server's clock; resumed, each runs out after exactly the time it had left.
// Only the test moves the server's clock, so each figure is exact.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/index.js";
import { ManualClock } from "../../server/clock-control.js";
import { MediaEngine } from "../../server/media/index.js";
import { MemoryMedia } from "../../server/media/memory-media.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { connected, FakeSignalling, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { trainingRuns } from "../helpers/training.js";

interface RunDoc {
  id: string;
  status: string;
  callers: { index: number; state: string; outcome: string | null; wait_s?: number; call_id: string | null }[];
}

const clock = new ManualClock(Date.now());
const media = new MediaEngine({ maxSendLatenessMs: Infinity });
const signalling = new FakeSignalling(media);
const events: BusEvent[] = [];
let api: TestApi;
let admin: string;
let accountId: string;
let base: string;
let trainee: { id: string; phone: FakePhone };
const queueIds = new Map<string, string>();
/** The test's run: stopped after it, whatever the test did, so the next may start its own. */
let liveRunId: string | undefined;

beforeAll(async () => {
  api = await startApi({ clock, config: { callSignalling: signalling } });
  ({ token: admin, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}`;
  const devices = await api.call<{ id: string; username: string }[]>("GET", `${base}/devices`, { token: admin });
  const device = devices.body.data.find((d) => d.username === "agent1");
  if (!device) throw new Error("no agent1 device");
  trainee = { id: (await api.login("agent1")).ownerId, phone: signalling.phone({ accountId, deviceId: device.id }, "agent1") };
  const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  for (const q of queues.body.data) queueIds.set(q.name, q.id);
  api.server.events.bus.subscribe((e) => {
    if (e.account_id === accountId) events.push(e);
  });
  const warm = media.createLeg();
  await warm.createOffer();
  await warm.close();
});
afterEach(async () => {
  if (liveRunId !== undefined) await api.call("POST", `${base}/training_runs/${liveRunId}`, { token: admin, data: { action: "stop" } });
  liveRunId = undefined;
});
afterAll(async () => {
  await api?.close();
  await media.close();
});

const persona = { name: "Patient Caller", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 3600 }, talk_time: { distribution: "fixed", mean_s: 600 } };

function queueId(name: string): string {
  const id = queueIds.get(name);
  if (id === undefined) throw new Error(`no queue ${name}`);
  return id;
}

async function patchQueue(name: string, data: Record<string, unknown>): Promise<void> {
  const res = await api.call("PATCH", `${base}/callq_queues/${queueId(name)}`, { token: admin, data });
  expect(res.status, res.text).toBe(200);
}

/**
 * The caller's channel is up with its media: a training run's callers have direct media (in
 * memory: no leg, so no connect timeout on the server's clock, which the test then moves far ahead).
 */
async function mediaUp(runId: string): Promise<void> {
  await poll("the caller's media up", async () => {
    const callId = (await readRun(runId)).callers[0]?.call_id;
    const media = callId ? api.server.calls.channels.get(callId)?.media : undefined;
    return media instanceof MemoryMedia ? true : undefined;
  });
}

/** A run of one caller dialling `number` at once; its id. */
async function runOneCaller(number: string): Promise<string> {
  const runId = await runs.startRun({ name: `One caller to ${number}`, duration_s: 60, seed: 5, queues: [{ number, rate_per_hour: 0, bursts: [{ at_s: 0, count: 1, within_s: 0.1 }] }], personas: [persona] });
  liveRunId = runId;
  // The arrival is due within the first 0.1 s of the run.
  await clock.advance(100);
  return runId;
}

const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => api.call<T>(method, `${base}${path}`, { token: admin, data }));
const readRun = (id: string): Promise<RunDoc> => runs.readRun<RunDoc>(id);

async function act(runId: string, action: "pause" | "resume" | "stop"): Promise<void> {
  const res = await api.call("POST", `${base}/training_runs/${runId}`, { token: admin, data: { action } });
  expect(res.status, res.text).toBe(200);
}

async function sessionStates(queue: string): Promise<string[]> {
  return (await api.server.callq.queueSessions(accountId, queueId(queue))).map((s) => s.state);
}

/** The next call ringing the trainee's phone (one a stopped run left ended is skipped). */
async function nextCall(): Promise<PhoneCall> {
  for (;;) {
    const call = await trainee.phone.incoming(10_000);
    if (call.state === "offered" || call.state === "ringing") return call;
  }
}

const agentState = async (): Promise<{ availability_state: string; wrapup_time_seconds: number }> => api.server.callq.recipientStatus(accountId, trainee.id);

describe("a live run's clock holds the queue engine's timers of its account", () => {
  it("a paused run holds a waiting caller's connection timeout; resumed, the caller times out after the time it had left", async () => {
    // Support has nobody logged in: its caller waits until the queue's timeout.
    await patchQueue("Support", { timeout: 20 });
    const runId = await runOneCaller("5002");
    await poll("the caller waiting", async () => ((await sessionStates("Support")).includes("waiting") ? true : undefined));
    await mediaUp(runId);
    await act(runId, "pause");
    // Three times the timeout on the server's clock: the caller still waits, and their wait stands still.
    const before = (await readRun(runId)).callers[0]?.wait_s;
    await clock.advance(60_000);
    expect(await sessionStates("Support")).toEqual(["waiting"]);
    expect((await readRun(runId)).callers[0]).toMatchObject({ state: "waiting", wait_s: before });
    expect((await api.server.callq.queueStatus(accountId, queueId("Support"))).stats.longest_wait).toBe(0);
    await act(runId, "resume");
    // Nothing of the run's time passed between the caller's joining and the pause: all 20 s are left.
    await clock.advance(19_999);
    expect(await sessionStates("Support")).toEqual(["waiting"]);
    await clock.advance(1);
    await poll("the caller timed out", async () => ((await sessionStates("Support")).length === 0 ? true : undefined));
    const timedOut = events.find((e) => e.routing_key === `callq.queue.${queueId("Support")}` && e.name === "timeout");
    expect(timedOut?.data.wait_time).toBe(20);
    await runs.awaitCallers<RunDoc>(runId, { what: "the run's caller timed out", done: (run) => run.callers[0]?.outcome === "timeout", timeoutMs: 15_000 });
  }, 30_000);

  it("a paused run holds an agent's ring timeout; resumed, the offer times out after the time it had left", async () => {
    await patchQueue("Sales", { ring_timeout: 15 });
    await api.server.callq.recipientAction(accountId, trainee.id, "login_ready");
    const runId = await runOneCaller("5001");
    // The trainee's phone rings and nobody answers: the offer outlives its ring timeout while paused.
    const call = await nextCall();
    await mediaUp(runId);
    await act(runId, "pause");
    await clock.advance(60_000);
    expect((await agentState()).availability_state).toBe("Call-Offer");
    expect(call.state).not.toBe("ended");
    await act(runId, "resume");
    await clock.advance(14_999);
    expect((await agentState()).availability_state).toBe("Call-Offer");
    await clock.advance(1);
    await call.reaches("ended");
    const missed = events.find((e) => e.routing_key === `callq.recipient.${trainee.id}` && e.name === "reject");
    expect(missed?.data.reason).toBe("timeout");
  }, 30_000);

  it("a paused run holds an agent's wrap-up countdown; resumed, the wrap-up ends after the time it had left", async () => {
    await patchQueue("Sales", { agent_wrapup_time: 30, wrapup_policy: "timeboxed" });
    await api.server.callq.recipientAction(accountId, trainee.id, "login_ready");
    const runId = await runOneCaller("5001");
    const call = await nextCall();
    await call.answer();
    await connected(call);
    call.hangup();
    await poll("the wrap-up", async () => ((await agentState()).availability_state === "Wrapup-Time" ? true : undefined));
    expect((await agentState()).wrapup_time_seconds).toBe(30);
    await act(runId, "pause");
    // Four times the wrap-up on the server's clock: the countdown stands still.
    await clock.advance(120_000);
    expect(await agentState()).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 30 });
    await act(runId, "resume");
    await clock.advance(29_999);
    expect(await agentState()).toMatchObject({ availability_state: "Wrapup-Time", wrapup_time_seconds: 1 });
    await clock.advance(1);
    expect((await agentState()).availability_state).toBe("Ready");
  }, 40_000);

  it("the queue status and callq.clock events tell the queue time's lag and pause; an offer after a pause carries the enter time less the pause", async () => {
    await patchQueue("Sales", { timeout: 600, ring_timeout: 15 });
    await api.server.callq.recipientAction(accountId, trainee.id, "logout");
    const runId = await runOneCaller("5001");
    await poll("the caller waiting", async () => ((await sessionStates("Sales")).includes("waiting") ? true : undefined));
    await mediaUp(runId);
    const told = (): unknown[] => events.filter((e) => e.routing_key === `callq.clock.${accountId}` && e.name === "clock").map((e) => e.data.queue_clock);
    const queueClock = async (): Promise<unknown> => (await api.server.callq.queueStatus(accountId, queueId("Sales"))).queue_clock;
    expect(await queueClock()).toEqual({ behind_ms: 0, paused: false });
    const toldBefore = told().length;
    await act(runId, "pause");
    await clock.advance(30_000);
    expect(await queueClock()).toEqual({ behind_ms: 30_000, paused: true });
    await act(runId, "resume");
    expect(told().slice(toldBefore)).toEqual([
      { behind_ms: 0, paused: true },
      { behind_ms: 30_000, paused: false },
    ]);
    await clock.advance(2_000);
    expect(await queueClock()).toEqual({ behind_ms: 30_000, paused: false });
    // The trainee's phone rings about 2 s of queue time after the caller joined, 32 s on the server's clock.
    const invites = signalling.invites.length;
    await api.server.callq.recipientAction(accountId, trainee.id, "login_ready");
    await nextCall();
    const headers = new Map(signalling.invites.slice(invites).find((i) => i.options.headers?.some(([name]) => name === "X-Queue-ID"))?.options.headers ?? []);
    expect(headers.get("X-Queue-Wait-Seconds")).toBe("2");
    const sinceEntered = clock.now() / 1000 - Number(headers.get("X-Queue-Enter-Time"));
    expect(sinceEntered).toBeGreaterThanOrEqual(2);
    expect(sinceEntered).toBeLessThan(3.2);
  }, 30_000);
});
