// Live training runs on a started server (real time, real werift legs, no browser): a scenario's
// callers call the Sales queue as scripted simulated callers, a simulated agent logs in as a real
// recipient beside a trainee whose fake phone answers, and the scorecard's figures equal what the
// CDRs and the queue and recipient events say (hold and wrap-up included). Pausing the run holds a waiting caller's patience
// and wait; only admins and trainers run and see runs, a trainee sees their own scorecard row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scorecard as Card } from "../../contract/training.js";
import type { BusEvent } from "../../server/events/index.js";
import { MediaEngine } from "../../server/media/index.js";
import { rm } from "node:fs/promises";
import { startServer } from "../../server/index.js";
import { localServerConfig, startApi, type TestApi } from "../helpers/api.js";
import { EventsClient } from "../helpers/events-client.js";
import { connected, FakeSignalling, sleep, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { trainingRuns } from "../helpers/training.js";

interface RunDoc {
  id: string;
  status: string;
  agents: { id: string; name: string }[];
  callers: { index: number; state: string; outcome: string | null; wait_s?: number; call_id: string | null }[];
  timeline: { name: string; at_ms: number }[];
}

const media = new MediaEngine({ maxSendLatenessMs: Infinity });
const signalling = new FakeSignalling(media);
const events: BusEvent[] = [];
let api: TestApi;
let admin: string;
let accountId: string;
let base: string;
let trainee: { id: string; token: string; phone: FakePhone };
let salesId: string;

beforeAll(async () => {
  api = await startApi({ config: { callSignalling: signalling } });
  ({ token: admin, accountId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}`;
  const devices = await api.call<{ id: string; username: string; owner_id?: string }[]>("GET", `${base}/devices`, { token: admin });
  const login = await api.login("agent1");
  const device = devices.body.data.find((d) => d.username === "agent1");
  if (!device) throw new Error("no agent1 device");
  trainee = { id: login.ownerId, token: login.token, phone: signalling.phone({ accountId, deviceId: device.id }, "agent1") };
  const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  salesId = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
  api.server.events.bus.subscribe((e) => {
    if (e.account_id === accountId) events.push(e);
  });
  const warm = media.createLeg();
  await warm.createOffer();
  await warm.close();
});
afterAll(async () => {
  await api?.close();
  await media.close();
});

const persona = { name: "Dana Caller", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 60 }, talk_time: { distribution: "fixed", mean_s: 5 }, digits: "42" };

const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => api.call<T>(method, `${base}${path}`, { token: admin, data }));
const scenario = (data: Record<string, unknown>): Promise<string> => runs.scenario(data);
const readRun = (id: string): Promise<RunDoc> => runs.readRun<RunDoc>(id);
/** Every caller of the run is done; then the trainer stops it (its duration is a minute at least). */
async function callersDone(id: string): Promise<void> {
  await runs.awaitCallers<RunDoc>(id, { what: "every caller done" });
  const stopped = await api.call<RunDoc>("POST", `${base}/training_runs/${id}`, { token: admin, data: { action: "stop" } });
  expect(stopped.status, stopped.text).toBe(200);
}

/**
 * The card's figure is `seconds` rounded to a tenth: at most half a tenth away (toBeCloseTo's
 * strict bound fails the exact half, 2.05 shown as 2.1).
 */
function expectTenth(shown: number | null, seconds: number): void {
  expect(shown).not.toBeNull();
  expect(Math.abs((shown ?? Number.NaN) - seconds), `${String(shown)} for ${seconds} s`).toBeLessThanOrEqual(0.05 + 1e-9);
}

describe("a live training run", () => {
  it("plays callers against a trainee and a simulated agent; the scorecard equals the CDRs and the queue's events", async () => {
    await api.server.callq.recipientAction(accountId, trainee.id, "login_ready");
    // The trainee answers every call after a moment and greets the caller: a prompt, so the
    // caller presses its digits. The first caller is then put on hold for a moment.
    let held = false;
    // Read through a function: the state changes across awaits, where a narrowed read would lie.
    const talking = (call: PhoneCall): boolean => call.state === "talking";
    const answering = (async () => {
      for (;;) {
        const call = await trainee.phone.incoming(60_000).catch(() => undefined);
        if (!call) return;
        await sleep(300);
        if (call.state !== "offered" && call.state !== "ringing") continue;
        await call.answer();
        await call.say("tone_stream://%(400,3000,440)");
        if (held) continue;
        // On hold once the caller has pressed its digits, so the hold cuts nothing short.
        await connected(call);
        await until(() => call.dtmfIn.length >= 2 || !talking(call), "the caller's digits");
        if (!talking(call)) continue;
        held = true;
        await call.hold();
        await sleep(800);
        if (talking(call)) await call.unhold();
      }
    })();
    const id = await scenario({
      name: "Live four",
      duration_s: 60,
      seed: 11,
      queues: [{ queue_id: salesId, rate_per_hour: 0, bursts: [{ at_s: 0.2, count: 4, within_s: 2 }] }],
      personas: [persona],
      agents: { count: 1, ring_delay_s: 0.5, handle_time: { distribution: "fixed", mean_s: 1.5 }, wrapup_s: 1 },
    });
    const started = await api.call<RunDoc>("POST", `${base}/training_scenarios/${id}/runs`, { token: admin });
    expect(started.status, started.text).toBe(201);
    const runId = started.body.data.id;
    expect(started.headers.get("location")).toBe(`${base}/training_runs/${runId}`);
    const bot = started.body.data.agents[0];
    if (!bot) throw new Error("no simulated agent");
    // The bot is a real recipient of the queue: the board's status lists it Ready.
    const status = await api.call<{ availability_state?: string }>("GET", `${base}/callq_recipients/${bot.id}/status`, { token: admin });
    expect(status.status, status.text).toBe(200);
    const second = await api.call("POST", `${base}/training_scenarios/${id}/runs`, { token: admin });
    expect(second.status, second.text).toBe(409);

    await callersDone(runId);
    await api.server.callq.recipientAction(accountId, trainee.id, "logout");
    const run = await readRun(runId);
    expect(run.callers).toHaveLength(4);
    const endedAt = run.timeline.find((e) => e.name === "ended")?.at_ms ?? 0;
    expect(run.timeline.map((e) => e.name)).toContain("ended");

    // Every leg has hung up and written its CDR before the card is read.
    await poll("every channel gone", () => (api.server.calls.channels.size === 0 ? true : undefined));
    const answeredLegs = async () => (await api.server.store.account(accountId, "cdrs")).all().filter((d) => d.data.owner_id !== undefined && Number(d.data.billing_seconds) > 0).length;
    const answers = events.filter((e) => e.routing_key === `callq.queue.${salesId}` && e.name === "answered").length;
    await poll("the agents' CDRs written", async () => ((await answeredLegs()) >= answers ? true : undefined));
    const card = (await api.call<Card>("GET", `${base}/training_runs/${runId}/scorecard`, { token: admin })).body.data;
    const cdrs = (await api.server.store.account(accountId, "cdrs")).all().map((d) => d.data);
    const callIds = new Set(run.callers.map((c) => c.call_id));
    const queueEvents = events.filter((e) => e.routing_key === `callq.queue.${salesId}` && callIds.has(String(e.data.call_id)));
    const answeredEvents = queueEvents.filter((e) => e.name === "answered");
    expect(card.run.offered).toBe(queueEvents.filter((e) => e.name === "join").length);
    expect(card.run.offered).toBe(4);
    expect(card.run.answered).toBe(answeredEvents.length);
    expect(card.run.abandoned).toBe(queueEvents.filter((e) => e.name === "abandoned").length);

    const me = card.people.find((p) => p.user_id === trainee.id);
    const them = card.people.find((p) => p.user_id === bot.id);
    expect(me, JSON.stringify(card.people)).toBeDefined();
    expect(them, JSON.stringify(card.people)).toBeDefined();
    if (!me || !them) return;
    expect(them.simulated).toBe(true);
    expect(me.simulated).toBe(false);
    expect(me.answered).toBeGreaterThan(0);
    expect(them.answered).toBeGreaterThan(0);
    expect(me.answered + them.answered).toBe(answeredEvents.length);
    for (const person of [me, them]) {
      const mine = answeredEvents.filter((e) => e.data.recipient_id === person.user_id);
      const recipient = events.filter((e) => e.routing_key === `callq.recipient.${person.user_id}`);
      expect(person.answered).toBe(mine.length);
      expect(person.offered).toBe(recipient.filter((e) => e.name === "offer").length);
      expect(person.missed).toBe(recipient.filter((e) => e.name === "reject").length);
      const waits = mine.map((e) => Number(e.data.wait_time));
      expectTenth(person.average_speed_of_answer_s, waits.reduce((a, b) => a + b, 0) / waits.length);
      const legs = cdrs.filter((c) => c.owner_id === person.user_id && Number(c.billing_seconds) > 0);
      expect(legs).toHaveLength(person.answered);
      expect(person.talk_s).toBe(legs.reduce((sum, c) => sum + Number(c.billing_seconds), 0));
      // Wrap-up: from each wrapup event to the person's next event, or to the run's end.
      let wrapupMs = 0;
      let since: number | undefined;
      for (const e of recipient.filter((x) => x.at <= endedAt)) {
        if (since !== undefined && e.name !== "wrapup") {
          wrapupMs += e.at - since;
          since = undefined;
        }
        if (e.name === "wrapup") since ??= e.at;
      }
      if (since !== undefined) wrapupMs += endedAt - since;
      expect(person.wrapup_s).toBeGreaterThan(0);
      expectTenth(person.wrapup_s, wrapupMs / 1000);
    }
    // Hold: from the trainee's leg's CHANNEL_HOLD to its next call event.
    const legEvents = events.filter((e) => e.routing_key.startsWith("call.CHANNEL_"));
    let holdMs = 0;
    for (const hold of legEvents.filter((e) => e.name === "CHANNEL_HOLD" && e.data.owner_id === trainee.id)) {
      const leg = hold.routing_key.slice(hold.routing_key.lastIndexOf(".") + 1);
      const after = legEvents.find((e) => e.seq > hold.seq && e.routing_key.endsWith(`.${leg}`));
      holdMs += Math.min(after?.at ?? endedAt, endedAt) - hold.at;
    }
    expect(holdMs).toBeGreaterThan(0);
    expectTenth(me.hold_s, holdMs / 1000);
    // A caller presses its digits once it hears a prompt (sound, then quiet): every caller the
    // trainee greeted did, and the trainee's phone received what their card counts. (A bot's
    // callers press theirs when the hold music gives way to the bot's silence, if it did play.)
    const heard = trainee.phone.calls.filter((c) => c.direction === "incoming" && c.dtmfIn.map((d) => d.digit).join("") === "42");
    expect(me.digits_collected, JSON.stringify(card)).toBe(me.answered);
    expect(heard).toHaveLength(me.digits_collected);
    expect(me.digits_collected + them.digits_collected).toBe(card.run.digits_collected);

    const csv = await api.call("GET", `${base}/training_runs/${runId}/scorecard`, { token: admin, query: { accept: "csv" } });
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = csv.text.trim().split("\r\n");
    expect(lines[0]).toBe("name,user_id,simulated,offered,answered,missed,abandoned_while_ringing,average_speed_of_answer_s,talk_s,hold_s,wrapup_s,average_handle_time_s,handle_time_met,transfers,digits_collected,texts_received,texts_answered,average_text_response_s,text_response_met");
    expect(lines).toHaveLength(card.people.length + 2);

    // The trainee sees their own row and the run's figures, no colleague's; not the run itself.
    const own = await api.call<Card>("GET", `${base}/training_runs/${runId}/scorecard`, { token: trainee.token });
    expect(own.status, own.text).toBe(200);
    expect(own.body.data.people.map((p) => p.user_id)).toEqual([trainee.id]);
    expect((await api.call("GET", `${base}/training_runs/${runId}`, { token: trainee.token })).status).toBe(403);
    const other = await api.login("agent2");
    expect((await api.call("GET", `${base}/training_runs/${runId}/scorecard`, { token: other.token })).status).toBe(403);

    // The bots are gone from the account and its queue once the run is over.
    expect((await api.server.store.account(accountId, "users")).get(bot.id)).toBeUndefined();
    const sales = (await api.server.store.account(accountId, "callq_queues")).get(salesId);
    expect(Object.keys((sales?.data.members ?? {}) as object)).not.toContain(bot.id);
    const list = await api.call<{ id: string; status: string }[]>("GET", `${base}/training_runs`, { token: admin });
    expect(list.body.data[0]).toMatchObject({ id: runId, status: "ended" });
    trainee.phone.removeAllListeners();
    void answering;
  }, 60_000);

  it("pause holds a waiting caller's patience and wait; resume lets it run out; stop ends the run", async () => {
    // Support has nobody logged in: the caller waits until their patience runs out.
    const id = await scenario({
      name: "Pause one",
      duration_s: 60,
      seed: 3,
      queues: [{ number: "5002", rate_per_hour: 0, bursts: [{ at_s: 0, count: 1, within_s: 0.1 }] }],
      personas: [{ ...persona, patience: { distribution: "fixed", mean_s: 2.5 } }],
    });
    const socket = await EventsClient.connect(`${api.url.replace(/^http/, "ws")}/events`);
    const reply = await socket.subscribe(accountId, "training.run.*", { auth_token: admin });
    expect(reply).toMatchObject({ action: "reply", status: "success" });
    const runId = await runs.startRun(id);
    await runs.awaitCallers<RunDoc>(runId, { what: "the caller waiting", done: (run) => run.callers[0]?.state === "waiting", timeoutMs: 15_000 });
    const paused = await api.call<RunDoc>("POST", `${base}/training_runs/${runId}`, { token: admin, data: { action: "pause" } });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.body.data.status).toBe("paused");
    const again = await api.call("POST", `${base}/training_runs/${runId}`, { token: admin, data: { action: "pause" } });
    expect(again.status, again.text).toBe(400);
    const before = (await readRun(runId)).callers[0]?.wait_s;
    // Longer than the caller's whole patience, in real time: paused, it does not run out.
    await sleep(3000);
    const during = (await readRun(runId)).callers[0];
    expect(during?.state).toBe("waiting");
    expect(during?.wait_s).toBe(before);
    expect((await api.call("POST", `${base}/training_runs/${runId}`, { token: admin, data: { action: "resume" } })).status).toBe(200);
    await callersDone(runId);
    const run = await readRun(runId);
    expect(run.callers[0]?.outcome).toBe("abandoned");
    expect(run.timeline.map((e) => e.name)).toEqual(expect.arrayContaining(["started", "caller_arrived", "caller_waiting", "paused", "resumed", "caller_abandoned", "ended"]));
    // The event websocket said each step of the run, on training.run.<id>.
    await poll("the run's end on the event websocket", () => (socket.events.some((e) => e.name === "ended") ? true : undefined));
    expect(socket.events.every((e) => e.routing_key === `training.run.${runId}`)).toBe(true);
    expect(socket.events.map((e) => e.name)).toEqual(run.timeline.map((e) => e.name));
    await socket.close();
    const stopAgain = await api.call("POST", `${base}/training_runs/${runId}`, { token: admin, data: { action: "stop" } });
    expect(stopAgain.status, stopAgain.text).toBe(400);
  }, 30_000);

  it("refuses users who are neither admin nor trainer, unknown actions and unknown runs, changing nothing", async () => {
    const id = await scenario({ name: "Refusals", duration_s: 600, seed: 1, queues: [{ number: "5002", rate_per_hour: 0 }], personas: [persona] });
    const agent = await api.login("agent2");
    expect((await api.call("POST", `${base}/training_scenarios/${id}/runs`, { token: agent.token })).status).toBe(403);
    expect((await api.call("GET", `${base}/training_runs`, { token: agent.token })).status).toBe(403);
    const runs = await api.server.store.account(accountId, "training_runs");
    const count = runs.all().length;
    expect((await api.call("POST", `${base}/training_scenarios/${"0".repeat(32)}/runs`, { token: admin })).status).toBe(404);
    expect(runs.all()).toHaveLength(count);

    // A trainer may.
    await api.call("PATCH", `${base}/users/${agent.ownerId}`, { token: admin, data: { training: { trainer: true } } });
    const started = await api.call<RunDoc>("POST", `${base}/training_scenarios/${id}/runs`, { token: agent.token });
    expect(started.status, started.text).toBe(201);
    const runId = started.body.data.id;
    const unknown = await api.call<unknown>("POST", `${base}/training_runs/${runId}`, { token: agent.token, data: { action: "rewind" } });
    expect(unknown.status).toBe(400);
    expect(unknown.text).toContain("rewind");
    expect((await api.call("POST", `${base}/training_runs/${runId}`, { token: agent.token, data: {} })).status).toBe(400);
    expect((await readRun(runId)).status).toBe("running");
    const stopped = await api.call<RunDoc>("POST", `${base}/training_runs/${runId}`, { token: agent.token, data: { action: "stop" } });
    expect(stopped.status, stopped.text).toBe(200);
    expect(stopped.body.data.status).toBe("ended");
    expect((await api.call("GET", `${base}/training_runs/${"0".repeat(32)}`, { token: admin })).status).toBe(404);
    await api.call("PATCH", `${base}/users/${agent.ownerId}`, { token: admin, data: { training: { trainer: false } } });
  });

  it("ends at the next start a run a stopped server left live, its simulated agents gone from the account and the queue", async () => {
    const other = await startApi();
    const { accountId: account } = await other.login("admin");
    const store = other.server.store;
    const run = await (await store.account(account, "training_runs")).create({ scenario_id: "x", scenario_name: "Left live", seed: 1, status: "running", started: 1, timeline: [], pvt_started_ms: 1 });
    const bot = await (await store.account(account, "users")).create({ username: "sim-agent-left", first_name: "Simulated agent", last_name: "1", enabled: true, callq: { enabled: true }, training: { simulated_agent_of: run.id } });
    const device = await (await store.account(account, "devices")).create({ name: "Simulated agent 1 phone", enabled: true, owner_id: bot.id, training: { simulated_agent_of: run.id } });
    const queues = await store.account(account, "callq_queues");
    const sales = queues.all().find((q) => q.data.name === "Sales");
    if (!sales) throw new Error("no Sales queue");
    await queues.update(sales.id, { ...sales.data, members: { ...(sales.data.members as object), [bot.id]: "" } });
    // The data stays as a crash would leave it: the server closes without the run live in it.
    await other.server.close();
    const again = await startServer(localServerConfig(other.dataDir));
    try {
      const runs = await again.store.account(account, "training_runs");
      const users = await again.store.account(account, "users");
      await poll("the run ended and its bot gone", () => (runs.get(run.id)?.data.status === "ended" && users.get(bot.id) === undefined ? true : undefined));
      expect((runs.get(run.id)?.data.timeline as { name: string; reason?: string }[]).at(-1)).toMatchObject({ name: "ended", reason: "restart" });
      expect((await again.store.account(account, "users")).get(bot.id)).toBeUndefined();
      expect((await again.store.account(account, "devices")).get(device.id)).toBeUndefined();
      const members = (await again.store.account(account, "callq_queues")).get(sales.id)?.data.members as Record<string, string>;
      expect(Object.keys(members)).not.toContain(bot.id);
      expect(Object.keys(members).length).toBeGreaterThan(0);
    } finally {
      await again.close();
      await rm(other.dataDir, { recursive: true, force: true });
    }
  });
});
