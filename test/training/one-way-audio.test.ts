// The one_way_audio fault of a live training run (issue 18 item 5), on a started server with real
// werift legs: a caller's phone plays a 440 Hz tone to the trainee, whose phone answers with
// 1000 Hz. While the fault's window is open the server passes no audio one way on the trainee's
// legs (a silence, the call stays up) and the other way still carries its tone; once the window
// closes on the run's clock both ways carry again. By the trainer's hand on a call already bridged
// (to_agent, the trainee named by username), and from the scenario's timeline on a call bridged
// during the window (from_agent, named by user id).
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { levelDbfs, MediaEngine, toneShare } from "../../server/media/index.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { connected, FakeSignalling, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { trainingRuns } from "../helpers/training.js";

interface TimelineEntry {
  name: string;
  source?: string;
  applied?: boolean;
  user_id?: string;
  call_ids?: string[];
  fault?: Record<string, unknown>;
}

const CALLER_HZ = 440;
const TRAINEE_HZ = 1000;

const media = new MediaEngine({ maxSendLatenessMs: Infinity });
const signalling = new FakeSignalling(media);
let api: TestApi;
let admin: string;
let base: string;
let salesId: string;
let traineeId: string;
let callerPhone: FakePhone;
let traineePhone: FakePhone;

beforeAll(async () => {
  api = await startApi({ config: { callSignalling: signalling } });
  const login = await api.login("admin");
  admin = login.token;
  base = `/v2/accounts/${login.accountId}`;
  traineeId = (await api.login("agent1")).ownerId;
  const devices = await api.call<{ id: string; username: string }[]>("GET", `${base}/devices`, { token: admin });
  const phoneOf = (username: string): FakePhone => {
    const device = devices.body.data.find((d) => d.username === username);
    if (!device) throw new Error(`no ${username} device`);
    return signalling.phone({ accountId: login.accountId, deviceId: device.id }, username);
  };
  callerPhone = phoneOf("admin");
  traineePhone = phoneOf("agent1");
  const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  salesId = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
});
/** The test's run and call: ended after it whatever happened, so the next may start its own. */
let current: string | undefined;
let up: PhoneCall | undefined;
afterEach(async () => {
  if (up?.state === "talking") up.hangup();
  if (current !== undefined) await act(current, { action: "stop" });
  current = undefined;
  up = undefined;
});
afterAll(async () => {
  await api?.close();
  await media.close();
});

const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => api.call<T>(method, `${base}${path}`, { token: admin, data }));
const entries = (id: string, name: string): Promise<TimelineEntry[]> => runs.entries<TimelineEntry>(id, name);
/** With the answer's text, for the refusals' messages. */
const act = (id: string, data: Record<string, unknown>) => api.call<Record<string, Record<string, unknown>>>("POST", `${base}/training_runs/${id}`, { token: admin, data });

async function startRun(faults: Record<string, unknown>[] = []): Promise<string> {
  const id = await runs.startRun({ name: `One-way ${Math.random()}`, duration_s: 120, seed: 3, queues: [{ queue_id: salesId, rate_per_hour: 0 }], personas: [{ name: "Quiet", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 60 } }], faults });
  current = id;
  return id;
}

/** The caller dials the trainee's extension, the trainee answers; each plays its tone. */
async function call(): Promise<{ caller: PhoneCall; trainee: PhoneCall }> {
  const caller = await callerPhone.dial("1002");
  const trainee = await traineePhone.incoming();
  await trainee.answer();
  up = caller;
  await connected(caller, trainee);
  await caller.say(`tone_stream://${CALLER_HZ}`);
  await trainee.say(`tone_stream://${TRAINEE_HZ}`);
  return { caller, trainee };
}

/** Until each side hears the other's tone (media settling after the answer, a loaded machine). */
async function bothCarry(pair: { caller: PhoneCall; trainee: PhoneCall }, what: string): Promise<void> {
  await poll(what, async () => {
    const heard = await listen(pair);
    return heard.trainee.tone > TONE_SHARE && heard.caller.tone > TONE_SHARE ? true : undefined;
  }, 15_000);
}

/** What each side hears over the same 600 ms: its level and the share of the other side's tone. */
async function listen(pair: { caller: PhoneCall; trainee: PhoneCall }): Promise<{ trainee: { dbfs: number; tone: number }; caller: { dbfs: number; tone: number } }> {
  const [atTrainee, atCaller] = await Promise.all([pair.trainee.record(600), pair.caller.record(600)]);
  return {
    trainee: { dbfs: levelDbfs(atTrainee), tone: toneShare(atTrainee, CALLER_HZ) },
    caller: { dbfs: levelDbfs(atCaller), tone: toneShare(atCaller, TRAINEE_HZ) },
  };
}

/**
 * A side that carries the other's tone: loud, and most of it that tone (a loaded machine's late
 * frames cost some share; silence has none).
 */
const TONE_SHARE = 0.5;
const carries = (heard: { dbfs: number; tone: number }): void => {
  expect(heard.dbfs).toBeGreaterThan(-30);
  expect(heard.tone).toBeGreaterThan(TONE_SHARE);
};
/** A side that hears silence. */
const silent = (heard: { dbfs: number }): void => {
  expect(heard.dbfs).toBeLessThan(-60);
};

describe("one-way audio in a live run", () => {
  it("by the trainer's hand, to_agent: the trainee hears silence on the call already up, the caller still hears them, then both carry again", async () => {
    const pair = await call();
    await bothCarry(pair, "both ways carry before the fault");

    const id = await startRun();
    const fault = await act(id, { action: "fault", fault: { kind: "one_way_audio", target: "agent1", duration_s: 4 } });
    expect(fault.status, fault.text).toBe(200);
    const [injected] = await entries(id, "fault_injected");
    expect(injected).toMatchObject({ source: "trainer", applied: true, user_id: traineeId, fault: { kind: "one_way_audio", target: "agent1", direction: "to_agent", duration_s: 4 } });
    // The trainee's leg of the call already up is muted from the start.
    expect(injected?.call_ids).toHaveLength(1);

    const during = await listen(pair);
    silent(during.trainee);
    carries(during.caller);
    expect(pair.trainee.state).toBe("talking");

    await runs.awaitEntries(id, "fault_cleared", "the window closed");
    await bothCarry(pair, "both ways carry after the window");
    pair.caller.hangup();
    expect((await act(id, { action: "stop" })).status).toBe(200);
  });

  it("from the scenario's timeline, from_agent: a call bridged during the window carries the caller's voice but not the trainee's, then both", async () => {
    const id = await startRun([{ at_s: 0.5, kind: "one_way_audio", target: traineeId, direction: "from_agent", duration_s: 8 }]);
    await runs.awaitEntries(id, "fault_injected", "the scenario's fault");
    const [injected] = await entries(id, "fault_injected");
    expect(injected).toMatchObject({ source: "scenario", applied: true, user_id: traineeId, fault: { direction: "from_agent", duration_s: 8 } });

    const pair = await call();
    await poll("the caller's tone reaches the trainee", async () => ((await listen(pair)).trainee.tone > TONE_SHARE ? true : undefined), 15_000);
    const during = await listen(pair);
    expect((await entries(id, "fault_cleared")).length, "the window was still open while listening").toBe(0);
    carries(during.trainee);
    silent(during.caller);

    await runs.awaitEntries(id, "fault_cleared", "the window closed");
    const [cleared] = await entries(id, "fault_cleared");
    // The leg bridged during the window was muted when it joined.
    expect(cleared?.call_ids).toHaveLength(1);
    await bothCarry(pair, "both ways carry after the window");
    pair.caller.hangup();
    expect((await act(id, { action: "stop" })).status).toBe(200);
  });

  it("refuses a fault without a trainee, with one the account lacks, or with a direction it does not know, changing nothing", async () => {
    const id = await startRun();
    const cases: [Record<string, unknown>, string, string][] = [
      [{ kind: "one_way_audio" }, "fault.target", "required"],
      [{ kind: "one_way_audio", target: "nobody-here" }, "fault.target", "not_found"],
      [{ kind: "one_way_audio", target: "agent1", direction: "sideways" }, "fault.direction", "enum"],
    ];
    for (const [fault, field, rule] of cases) {
      const res = await act(id, { action: "fault", fault });
      expect(res.status, `${field}: ${res.text}`).toBe(400);
      expect(res.body.data[field]?.[rule], `${field} ${rule}: ${res.text}`).toBeDefined();
    }
    expect(await entries(id, "fault_injected")).toHaveLength(0);
    expect((await act(id, { action: "stop" })).status).toBe(200);
  });
});
