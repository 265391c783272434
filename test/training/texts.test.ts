// Texts in live training runs (issue 18 items 5 and 7), on a started server with the simulated
// carrier on the real clock: the text_undelivered fault fails the trainee's texts to a persona's
// number (by count, by hand) or to a number (for a window, from the scenario's timeline), as the
// texting API's own delivery status with the fault's reason, and texts to other numbers, or after
// the fault, are delivered; personas who text instead text the trainee's number, and the
// scorecard counts the texts the trainee received and answered and the response time, equal to
// the texting API's message dates, in JSON and CSV.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine } from "../../server/media/index.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { FakeSignalling } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { trainingRuns } from "../helpers/training.js";
import { texting, textingUser, type TextingUser } from "../texting/texting-client.js";

interface TimelineEntry {
  name: string;
  at_s: number;
  source?: string;
  applied?: boolean;
  reason?: string;
  numbers?: string[];
  fault?: Record<string, unknown>;
  index?: number;
  caller_id_number?: string;
  user_id?: string;
  message_id?: string;
  response_s?: number;
}
interface RunDoc {
  id: string;
  callers: { index: number; state: string; outcome: string | null }[];
  timeline: TimelineEntry[];
}
interface Message {
  id: string;
  conversationId: string;
  direction: string;
  status: string;
  error?: string;
  date: number;
}
interface TextFigures {
  texts_received: number;
  texts_answered: number;
  average_text_response_s: number | null;
  text_response_met: boolean | null;
}
interface Card {
  run: { texts: number; texts_answered: number; average_text_response_s: number | null; text_response_met: boolean | null };
  people: (TextFigures & { user_id: string; offered: number })[];
}

const media = new MediaEngine({ maxSendLatenessMs: Infinity });
const signalling = new FakeSignalling(media);
let api: TestApi;
let admin: string;
let base: string;
let salesId: string;
let trainee: TextingUser;

beforeAll(async () => {
  api = await startApi({ config: { callSignalling: signalling } });
  const login = await api.login("admin");
  admin = login.token;
  base = `/v2/accounts/${login.accountId}`;
  const queues = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
  salesId = queues.body.data.find((q) => q.name === "Sales")?.id ?? "";
  trainee = await textingUser(api, "agent1");
});
afterAll(async () => {
  await api?.close();
  await media.close();
});

const dana = { name: "Dana Caller", weight: 1, number: "+1415555####", patience: { distribution: "fixed", mean_s: 60 }, lines: [{ text: "Is my order on its way?" }], texts_instead: true };

const runs = trainingRuns(<T,>(method: string, path: string, data?: unknown) => api.call<T>(method, `${base}${path}`, { token: admin, data }));
const readRun = (id: string): Promise<RunDoc> => runs.readRun<RunDoc>(id);
const entries = (id: string, name: string): Promise<TimelineEntry[]> => runs.entries<TimelineEntry>(id, name);
/** With the answer's text, for the refusals' messages. */
const act = (id: string, data: Record<string, unknown>) => api.call<Record<string, Record<string, unknown>>>("POST", `${base}/training_runs/${id}`, { token: admin, data });

function startRun(extra: Record<string, unknown> = {}): Promise<string> {
  return runs.startRun({ name: `Texts ${Math.random()}`, duration_s: 120, seed: 9, queues: [{ queue_id: salesId, rate_per_hour: 0 }], personas: [dana], ...extra });
}

/** The trainee texts `to` through the texting API; the message's id. */
async function send(to: string, message: string): Promise<string> {
  const res = await texting<{ messageId?: string }>(api, "POST", "/send", { bearer: trainee.bearer, body: { from: trainee.number, to, message } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.messageId ?? "";
}

/** The message as the texting API shows it in its thread, once its delivery is settled. */
async function settled(messageId: string): Promise<Message> {
  return poll(`message ${messageId} delivered or failed`, async () => {
    const contacts = await texting<{ contacts: { id: string }[] }>(api, "GET", "/contacts", { bearer: trainee.bearer });
    for (const contact of contacts.body.contacts) {
      const thread = await texting<{ messages: Message[] }>(api, "GET", `/contacts/${contact.id}/messages`, { bearer: trainee.bearer });
      const found = thread.body.messages.find((m) => m.id === messageId);
      if (found) return found.status === "delivered" || found.status === "failed" ? found : undefined;
    }
    return undefined;
  }, 10_000);
}

describe("text_undelivered", () => {
  it("by the trainer's hand with a count: the next text to the persona's number fails with the reason, then texts are delivered again", async () => {
    const id = await startRun();
    const fault = await act(id, { action: "fault", fault: { kind: "text_undelivered", target: "Dana Caller", count: 1 } });
    expect(fault.status, fault.text).toBe(200);
    const [injected] = await entries(id, "fault_injected");
    expect(injected).toMatchObject({ source: "trainer", applied: true, numbers: ["+1415555####"], fault: { kind: "text_undelivered", target: "Dana Caller", count: 1 } });
    expect(injected?.fault?.duration_s).toBeUndefined();

    // Another number is not hit; the persona's number is, once.
    const other = await settled(await send("+14155560000", "Hello there"));
    expect(other.status).toBe("delivered");
    const failed = await settled(await send("+14155551234", "Your order ships today"));
    expect(failed).toMatchObject({ status: "failed", error: "training fault: texts to Dana Caller (+1415555####) are not delivered" });
    expect(await entries(id, "fault_cleared")).toEqual([expect.objectContaining({ reason: "count", numbers: ["+1415555####"] })]);
    const again = await settled(await send("+14155551234", "Sorry, once more: it ships today"));
    expect(again.status).toBe("delivered");
    expect((await act(id, { action: "stop" })).status).toBe(200);
  });

  it("from the scenario's timeline for a window: texts to the number fail while it is open, and are delivered after", async () => {
    const id = await startRun({ faults: [{ at_s: 0.5, kind: "text_undelivered", target: "+14155557777", duration_s: 4 }] });
    await runs.awaitEntries(id, "fault_injected", "the scenario's fault");
    const [injected] = await entries(id, "fault_injected");
    expect(injected).toMatchObject({ source: "scenario", applied: true, numbers: ["+14155557777"], fault: { duration_s: 4 } });
    const during = await send("+14155557777", "Are you there?");
    expect((await entries(id, "fault_cleared")).length, "the window was still open when the text was sent").toBe(0);
    expect(await settled(during)).toMatchObject({ status: "failed", error: "training fault: texts to +14155557777 are not delivered" });
    await runs.awaitEntries(id, "fault_cleared", "the window closed");
    expect((await settled(await send("+14155557777", "And now?"))).status).toBe("delivered");
    expect((await act(id, { action: "stop" })).status).toBe(200);
  });

  it("refuses a fault without a target, with one that is neither a persona nor a number, or from a trainee, changing nothing", async () => {
    const id = await startRun();
    for (const [fault, rule] of [
      [{ kind: "text_undelivered" }, "required"],
      [{ kind: "text_undelivered", target: "Nobody" }, "not_found"],
    ] as const) {
      const res = await act(id, { action: "fault", fault });
      expect(res.status, res.text).toBe(400);
      expect(res.body.data["fault.target"]?.[rule], res.text).toBeDefined();
    }
    // A trainee may not inject it.
    const byTrainee = await api.call("POST", `${base}/training_runs/${id}`, { token: trainee.token, data: { action: "fault", fault: { kind: "text_undelivered", target: "Dana Caller" } } });
    expect(byTrainee.status, byTrainee.text).toBe(403);
    expect(await entries(id, "fault_injected")).toHaveLength(0);
    expect((await settled(await send("+14155551235", "Still fine?"))).status).toBe("delivered");
    // A scenario's text_undelivered names its target too.
    const scenario = await api.call<Record<string, Record<string, unknown>>>("PUT", `${base}/training_scenarios`, {
      token: admin,
      data: { name: "No target", duration_s: 120, seed: 1, queues: [{ queue_id: salesId, rate_per_hour: 0 }], personas: [dana], faults: [{ at_s: 1, kind: "text_undelivered" }] },
    });
    expect(scenario.status, scenario.text).toBe(400);
    expect(scenario.body.data["faults.0.target"]?.required, scenario.text).toBeDefined();
    expect((await act(id, { action: "stop" })).status).toBe(200);
  });
});

describe("personas who text instead", () => {
  it("text the trainee's number; the scorecard counts the texts received and answered and the response time, as the texting API dates them", async () => {
    const id = await startRun({
      queues: [
        { queue_id: salesId, rate_per_hour: 0, texting_number: trainee.number, bursts: [{ at_s: 0.2, count: 2, within_s: 0.5 }] },
        // A queue whose number nobody texts from: its persona's text has nowhere to go.
        { number: "+14155550999", rate_per_hour: 0, bursts: [{ at_s: 0.2, count: 1, within_s: 0.1 }] },
      ],
      targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 300, text_response_s: 3600 },
    });
    const texted = await runs.awaitEntries<TimelineEntry>(id, "caller_texted", "two personas texted", 2);
    expect(texted.map((t) => t.user_id)).toEqual([trainee.userId, trainee.userId]);
    await runs.awaitEntries(id, "caller_not_placed", "the third persona not placed");
    const [notPlaced] = await entries(id, "caller_not_placed");
    expect(notPlaced?.reason).toContain("+14155550999");
    const run = await readRun(id);
    expect(run.callers.map((c) => c.outcome).sort()).toEqual(["not_placed", "texted", "texted"]);

    // The trainee answers the first persona, twice (the first reply is the one that counts), not the second.
    const [first] = texted;
    const number = first?.caller_id_number ?? "";
    const reply = await settled(await send(number, "Yes, it ships today."));
    await settled(await send(number, "Anything else?"));
    const answered = await runs.awaitEntries(id, "text_answered", "the text answered");
    expect(answered).toEqual([expect.objectContaining({ index: first?.index, user_id: trainee.userId, message_id: reply.id })]);
    const thread = await texting<{ messages: Message[] }>(api, "GET", `/contacts/${reply.conversationId}/messages`, { bearer: trainee.bearer });
    const inbound = thread.body.messages.find((m) => m.id === first?.message_id);
    expect(inbound?.direction).toBe("in");
    const responseS = (reply.date - (inbound?.date ?? Number.NaN)) / 1000;

    expect((await act(id, { action: "stop" })).status).toBe(200);
    const card = (await api.call<Card>("GET", `${base}/training_runs/${id}/scorecard`, { token: admin })).body.data;
    const me = card.people.find((p) => p.user_id === trainee.userId);
    expect(me).toMatchObject({ offered: 0, texts_received: 2, texts_answered: 1, text_response_met: true });
    expect(Math.abs((me?.average_text_response_s ?? Number.NaN) - responseS)).toBeLessThanOrEqual(0.05 + 1e-9);
    expect(card.run).toMatchObject({ texts: 2, texts_answered: 1, average_text_response_s: me?.average_text_response_s, text_response_met: true });

    const csv = await api.call("GET", `${base}/training_runs/${id}/scorecard`, { token: admin, query: { accept: "csv" } });
    const [header, ...rows] = csv.text.trim().split("\r\n");
    const columns = (header ?? "").split(",");
    const mine = rows.map((r) => r.split(",")).find((cells) => cells[columns.indexOf("user_id")] === trainee.userId);
    expect(mine?.[columns.indexOf("texts_received")]).toBe("2");
    expect(mine?.[columns.indexOf("texts_answered")]).toBe("1");
    expect(mine?.[columns.indexOf("average_text_response_s")]).toBe(String(me?.average_text_response_s));
    expect(mine?.[columns.indexOf("text_response_met")]).toBe("true");
  });
});
