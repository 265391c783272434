// A queue call end to end in Chromium: agent1's console softphone logs in with the feature codes
// (*20, *21), a simulated customer dials the Sales queue (5001) and hears the hold music while
// agent1's page is offered the call (caller id with the queue's name, queue headers), the agent
// answers and both hear each other; a supervisor's page eavesdrops, whispers and barges, each
// checked by who hears the supervisor's tone; the agent hangs up, wraps up, is Ready again; the
// statuses, stats and events are read through the REST API.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { levelDbfs, toneShare } from "../../server/media/index.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { MEASURING_AUDIO, openPhoneLab, phoneLabDir, startLabPhone, toneWav, type LabCall, type LabWindow } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";
import { startApi, type TestApi } from "../helpers/api.js";

// The agent's and the supervisor's microphones, the customer's tone, and a probe for the floor:
// none of them in the hold music (its notes stay under 1.1 kHz).
const AGENT_TONE = 1500;
const SUPERVISOR_TONE = 2200;
const CALLER_TONE = 1200;
const FLOOR = 2900;
/** Heard: this far above the floor probe (dB); not heard: within NOT_HEARD of it. */
const HEARD = 20;
const NOT_HEARD = 10;

let api: TestApi;
let token: string;
let accountId: string;
let sales: string;
let agent1: string;
let supervisor: string;
let agentBrowser: LaunchedBrowser;
let supervisorBrowser: LaunchedBrowser;
let agentPage: Page;
let supervisorPage: Page;

interface OfferedCall extends LabCall {
  offer: { queueId?: string; queueName?: string; waitedS?: number };
}

const lab = (page: Page) => ({
  calls: () => page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls() as OfferedCall[]),
  dial: (target: string) => page.evaluate((t) => (globalThis as unknown as LabWindow).lab.phone().call(t), target),
  answer: (id: string) => page.evaluate((i) => (globalThis as unknown as LabWindow).lab.phone().answer(i), id),
  hangup: (id: string) => page.evaluate((i) => (globalThis as unknown as LabWindow).lab.phone().hangup(i), id),
  /** dB of `f` above the floor probe in what the page hears, both read at the same moments. */
  above: (id: string, f: number) =>
    page.evaluate(([i, q, r]) => (globalThis as unknown as LabWindow).lab.above(i, q, r, 1500), [id, f, FLOOR] as [string, number, number]),
  async idle() {
    await poll("the page's calls to end", async () => ((await this.calls()).length === 0 ? true : undefined));
  },
  async incoming() {
    return poll("a call offered to the page", async () => (await this.calls()).find((c) => c.state === "incoming"));
  },
  async active(id: string) {
    await poll("the call to be active", async () => ((await this.calls()).find((c) => c.id === id)?.state === "active" ? true : undefined));
  },
});

interface Status {
  availability_state: string;
  offered_call?: Record<string, unknown>;
  handling_call?: Record<string, unknown>;
  wiretapping_recipient?: string;
  wiretap_mode?: string;
  stats: { total_calls: number; missed_calls: number };
}

async function status(userId: string): Promise<Status> {
  const answer = await api.call<Status>("GET", `/v2/accounts/${accountId}/callq_recipients/${userId}/status`, { token });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

async function statusIs(userId: string, check: (s: Status) => boolean, what: string, timeoutMs?: number): Promise<Status> {
  return poll(what, async () => {
    const s = await status(userId);
    return check(s) ? s : undefined;
  }, timeoutMs);
}

async function monitor(mode: string): Promise<void> {
  const answer = await api.call("POST", `/v2/accounts/${accountId}/callq_recipients/${supervisor}`, { token, data: { action: "monitor", target: agent1, mode } });
  expect(answer.status, answer.text).toBe(202);
  await statusIs(supervisor, (s) => s.wiretap_mode === mode, `the supervisor's wiretap_mode ${mode}`);
}

interface LoggedEvent {
  seq: number;
  name: string;
  routing_key: string;
  data: Record<string, unknown>;
}

async function eventsSince(seq: number): Promise<LoggedEvent[]> {
  const answer = await api.call<LoggedEvent[]>("GET", `/v2/accounts/${accountId}/events`, { token, query: { since: String(seq), page_size: "100000" } });
  expect(answer.status, answer.text).toBe(200);
  return answer.body.data;
}

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  const users = (await api.server.store.account(accountId, "users")).all();
  const idOf = (username: string) => users.find((u) => u.data.username === username)?.id ?? "";
  agent1 = idOf("agent1");
  supervisor = idOf("supervisor");
  const queues = await api.call<{ id: string; name: string }[]>("GET", `/v2/accounts/${accountId}/callq_queues`, { token });
  sales = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
  const patched = await api.call("PATCH", `/v2/accounts/${accountId}/callq_queues/${sales}`, { token, data: { agent_wrapup_time: 2 } });
  expect(patched.status, patched.text).toBe(200);
  agentBrowser = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(AGENT_TONE, 60)}`]);
  supervisorBrowser = await launchBrowser([`--use-file-for-fake-audio-capture=${await toneWav(SUPERVISOR_TONE, 60)}`]);
  agentPage = await openPhoneLab(agentBrowser.browser, api.url);
  supervisorPage = await openPhoneLab(supervisorBrowser.browser, api.url);
  await startLabPhone(agentPage, api, accountId, "agent1", { audio: MEASURING_AUDIO });
  await startLabPhone(supervisorPage, api, accountId, "supervisor", { audio: MEASURING_AUDIO });
});
afterAll(async () => {
  await agentBrowser?.close();
  await supervisorBrowser?.close();
  await api?.close();
});

describe("a queue call in the console's softphone", () => {
  it("logs in by feature code, takes a queued customer with audio both ways under supervision, wraps up and is Ready again", async () => {
    const agent = lab(agentPage);
    const boss = lab(supervisorPage);
    const firstSeq = (await eventsSince(0)).at(-1)?.seq ?? 0;

    // *20 logs in (Away), *21 makes agent1 Ready: each call beeps and hangs up.
    expect((await status(agent1)).availability_state).toBe("Not-Logged-In");
    await agent.dial("*20");
    await agent.idle();
    expect((await status(agent1)).availability_state).toBe("Away");
    await agent.dial("*21");
    await agent.idle();
    expect((await status(agent1)).availability_state).toBe("Ready");

    // A simulated customer dials the queue; what it hears is read from its own media leg.
    const media = api.server.calls.context.media;
    const legsBefore = new Set(media.legs);
    const started = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      token,
      data: { to: "5001", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: `tone_stream://${CALLER_TONE}` },
    });
    expect(started.status, started.text).toBe(201);
    const simId = started.body.data.id;
    const customerLeg = await poll("the customer's leg", async () => {
      const channel = api.server.calls.channels.get(simId);
      return channel ? [...media.legs].find((l) => !legsBefore.has(l) && (l as unknown) !== channel.media) : undefined;
    });
    const customerHears = async (ms = 800): Promise<number[]> => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      const samples: number[] = [];
      const stop = media.clock.subscribe((tick) => samples.push(...customerLeg.incoming.read(tick)));
      await new Promise((resolve) => setTimeout(resolve, ms));
      stop();
      return samples;
    };

    const offered = await agent.incoming();
    expect(offered).toMatchObject({ direction: "inbound", remoteUser: "+14155550100", remoteName: "Sales: Casey Customer", offer: { queueId: sales, queueName: "Sales" } });
    expect(await status(agent1)).toMatchObject({ availability_state: "Call-Offer", offered_call: { queue_id: sales, caller_id_name: "Casey Customer" } });
    // While the agent's phone rings, the customer hears the queue's hold music.
    expect(levelDbfs(await customerHears()), "the customer hears the hold music").toBeGreaterThan(-40);
    const sessions = await api.call<{ queue_id: string; session_list: { session_id: string; call_id: string; state: string }[] }[]>(
      "GET",
      `/v2/accounts/${accountId}/callq_queues/${sales}/sessions`,
      { token },
    );
    const session = sessions.body.data[0]?.session_list.find((s) => s.call_id === simId);
    expect(session?.state).toBe("offering");

    await agent.answer(offered.id);
    await agent.active(offered.id);
    expect(await agent.above(offered.id, CALLER_TONE), `the agent hears the customer's ${CALLER_TONE} Hz`).toBeGreaterThan(HEARD);
    const customerTalk = await customerHears();
    expect(toneShare(customerTalk, AGENT_TONE), `the customer hears the agent's ${AGENT_TONE} Hz, not the music`).toBeGreaterThan(0.5);
    expect(await status(agent1)).toMatchObject({ availability_state: "On-A-Call", handling_call: { queue_id: sales, session_id: session?.session_id } });

    // The supervisor listens in: the page rings with the agent's name.
    const answerMonitor = await api.call("POST", `/v2/accounts/${accountId}/callq_recipients/${supervisor}`, { token, data: { action: "monitor", target: agent1, mode: "eavesdrop" } });
    expect(answerMonitor.status, answerMonitor.text).toBe(202);
    const monitorCall = await boss.incoming();
    expect(monitorCall.remoteName).toBe("Monitor: Alex Agent");
    await boss.answer(monitorCall.id);
    await boss.active(monitorCall.id);
    await statusIs(supervisor, (s) => s.wiretapping_recipient === agent1 && s.wiretap_mode === "eavesdrop", "the supervisor's wiretap");

    // Eavesdrop: the supervisor hears both; nobody hears the supervisor.
    expect(await boss.above(monitorCall.id, CALLER_TONE), "eavesdrop: the supervisor hears the customer").toBeGreaterThan(HEARD);
    expect(await boss.above(monitorCall.id, AGENT_TONE), "eavesdrop: the supervisor hears the agent").toBeGreaterThan(HEARD);
    expect(await agent.above(offered.id, SUPERVISOR_TONE), "eavesdrop: the agent does not hear the supervisor").toBeLessThan(NOT_HEARD);
    expect(toneShare(await customerHears(), SUPERVISOR_TONE), "eavesdrop: the customer does not hear the supervisor").toBeLessThan(0.02);

    // Whisper: the agent hears the supervisor, the customer does not.
    await monitor("whisper");
    expect(await agent.above(offered.id, SUPERVISOR_TONE), "whisper: the agent hears the supervisor").toBeGreaterThan(HEARD);
    expect(toneShare(await customerHears(), SUPERVISOR_TONE), "whisper: the customer does not hear the supervisor").toBeLessThan(0.02);

    // Barge: both hear the supervisor.
    await monitor("barge");
    expect(toneShare(await customerHears(), SUPERVISOR_TONE), "barge: the customer hears the supervisor").toBeGreaterThan(0.2);
    expect(await agent.above(offered.id, SUPERVISOR_TONE), "barge: the agent hears the supervisor").toBeGreaterThan(HEARD);
    expect(await agent.above(offered.id, CALLER_TONE), "barge: the agent still hears the customer").toBeGreaterThan(HEARD);

    // The supervisor leaves; the call goes on.
    await boss.hangup(monitorCall.id);
    await boss.idle();
    await statusIs(supervisor, (s) => s.wiretapping_recipient === undefined && s.wiretap_mode === undefined, "the wiretap cleared");
    expect(toneShare(await customerHears(), AGENT_TONE), "the customer still hears the agent").toBeGreaterThan(0.5);

    // The agent hangs up: the customer is gone, the agent wraps up for 2 s, then is Ready.
    await agent.hangup(offered.id);
    await agent.idle();
    await poll("the customer's call to end", async () => ((await api.call("GET", `/v2/accounts/${accountId}/sim/calls/${simId}`, { token })).status === 404 ? true : undefined));
    const wrapup = await statusIs(agent1, (s) => s.availability_state === "Wrapup-Time", "agent1 in wrap-up");
    expect(wrapup.stats).toMatchObject({ total_calls: 1, missed_calls: 0 });
    await statusIs(agent1, (s) => s.availability_state === "Ready", "agent1 Ready after the wrap-up", 6000);

    const queueStatus = await api.call<{ stats: Record<string, number> }>("GET", `/v2/accounts/${accountId}/callq_queues/${sales}/status`, { token });
    expect(queueStatus.body.data.stats).toMatchObject({ total_sessions: 1, active_session_count: 0, missed_sessions: 0, abandoned_sessions: 0 });

    const events = await eventsSince(firstSeq);
    const names = (key: string) => events.filter((e) => e.routing_key === key).map((e) => e.name);
    const sid = session?.session_id ?? "";
    expect(names(`callq.session.${sid}`)).toEqual(["create", "offer", "answered", "handled", "end"]);
    expect(events.filter((e) => e.routing_key === `callq.queue.${sales}` && e.data.session_id === sid).map((e) => e.name)).toEqual(["join", "offer", "answered", "leave"]);
    // Each change of the supervision: a bare wiretap event on the agent (their console reads its status).
    expect(names(`callq.recipient.${agent1}`).filter((n) => n !== "wiretap")).toEqual(["login", "ready", "offer", "delivered", "wrapup", "ready"]);
    expect(names(`callq.recipient.${agent1}`).filter((n) => n === "wiretap")).toHaveLength(4);
    // The supervisor's events name neither the target nor the mode: every user of the account may receive them.
    const monitorEvents = events.filter((e) => e.routing_key === `callq.recipient.${supervisor}` && e.name === "monitor");
    expect(monitorEvents.map((e) => [e.data.active, e.data.target, e.data.mode])).toEqual([
      [true, undefined, undefined],
      [true, undefined, undefined],
      [true, undefined, undefined],
      [false, undefined, undefined],
    ]);
    const offer = events.find((e) => e.routing_key === `callq.recipient.${agent1}` && e.name === "offer");
    expect(offer?.data).toMatchObject({ account_id: accountId, recipient_id: agent1, queue_id: sales, session_id: sid, caller_id_name: "Casey Customer", caller_id_number: "+14155550100" });
  });
});
