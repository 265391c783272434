// The console's call-queue client against a recorded fetch: the paths, verbs and bodies it sends
// (fidelity.md's Call queues and Recipients), and how it reads answers and event payloads,
// including the hosted service's extra or missing fields.
import { describe, expect, it } from "vitest";
import { createCallqApi, recipientEventOf, recipientStatusOf } from "../../renderer/api/callq.js";
import { gregorianToMs } from "../../renderer/api/gregorian.js";
import { ApiRequestError } from "../../renderer/api/client.js";

const ACCOUNT = "a".repeat(32);
const ME = "b".repeat(32);
const SALES = "1".repeat(32);
const G = 62_167_219_200;

interface Sent {
  method: string;
  url: string;
  token: string | null;
  body: unknown;
}

function recordedApi(answer: (sent: Sent) => unknown) {
  const sent: Sent[] = [];
  const api = createCallqApi({
    baseUrl: "http://127.0.0.1:8000/",
    token: "tok",
    accountId: ACCOUNT,
    fetch: async (url, init) => {
      const headers = new Headers(init.headers);
      const s: Sent = { method: init.method ?? "GET", url, token: headers.get("X-Auth-Token"), body: typeof init.body === "string" ? JSON.parse(init.body) : undefined };
      sent.push(s);
      return new Response(JSON.stringify({ status: "success", data: answer(s) }), { status: 200, headers: { "Content-Type": "application/json" } });
    },
  });
  return { api, sent };
}

const base = `http://127.0.0.1:8000/v2/accounts/${ACCOUNT}`;

describe("call-queue client requests", () => {
  it("changes state with status (and queue_id for one queue), wrap-up and monitor with actions", async () => {
    const { api, sent } = recordedApi(() => ({ availability_state: "Ready", stats: {} }));
    await api.setRecipientStatus(ME, "ready");
    await api.setRecipientStatus(ME, "away", SALES);
    await api.wrapup(ME, "wrapup_extend");
    await api.monitor(ME, "c".repeat(32), "whisper");
    expect(sent.map((s) => [s.method, s.url, s.body])).toEqual([
      ["POST", `${base}/callq_recipients/${ME}/status`, { data: { status: "ready" } }],
      ["POST", `${base}/callq_recipients/${ME}/status`, { data: { status: "away", queue_id: SALES } }],
      ["POST", `${base}/callq_recipients/${ME}`, { data: { action: "wrapup_extend" } }],
      ["POST", `${base}/callq_recipients/${ME}`, { data: { action: "monitor", target: "c".repeat(32), mode: "whisper" } }],
    ]);
    expect(sent.every((s) => s.token === "tok")).toBe(true);
  });

  it("asks several statuses in one POST, and reads not_logged_in", async () => {
    const { api, sent } = recordedApi(() => ({ [ME]: { availability_state: "Away", stats: {} }, x: "not_logged_in", y: 7 }));
    const statuses = await api.recipientStatuses([ME, "x", "y"]);
    expect(sent[0]).toMatchObject({ method: "POST", url: `${base}/callq_recipients/status`, body: { data: { recipient_ids: [ME, "x", "y"] } } });
    expect(statuses[ME]).toMatchObject({ state: "Away" });
    expect(statuses["x"]).toBe("not_logged_in");
    expect("y" in statuses).toBe(false);
    // No ids: no request.
    expect(await api.recipientStatuses([])).toEqual({});
    expect(sent.length).toBe(1);
  });

  it("reads a queue's sessions from [{queue_id, session_list}] and from a bare list", async () => {
    const row = { session_id: "s1", call_id: "c1", queue_id: SALES, caller_id_name: "Casey", caller_id_number: "+1415", queue_enter_time: G + 100, state: "offering", recipient_id: ME, extra: true };
    const wrapped = recordedApi(() => [{ queue_id: SALES, session_list: [row] }]);
    expect(await wrapped.api.queueSessions(SALES)).toEqual([
      { sessionId: "s1", callId: "c1", queueId: SALES, callerName: "Casey", callerNumber: "+1415", enteredAt: 100_000, state: "offering", recipientId: ME, callbackNumber: null },
    ]);
    const bare = recordedApi(() => [{ ...row, queue_id: undefined, state: "queued" }]);
    expect(await bare.api.queueSessions(SALES)).toMatchObject([{ queueId: SALES, state: "waiting" }]);
    // A callback (local addition) says the number it calls back.
    const callback = recordedApi(() => [{ ...row, state: "waiting", callback: { number: "+14155550123", requested_at: G + 100, attempts: 0 } }]);
    expect(await callback.api.queueSessions(SALES)).toMatchObject([{ state: "waiting", callbackNumber: "+14155550123" }]);
  });

  it("reads queue statuses and membership, all queues when no ids are given", async () => {
    const { api, sent } = recordedApi((s) =>
      s.url.includes("/status")
        ? { [SALES]: { active_recipient_count: 2, available_recipient_count: 1, stats: { active_session_count: 3, total_sessions: 9, missed_sessions: 1, abandoned_sessions: 2, average_wait: 4.5 } } }
        : [{ queue_id: SALES, members: [ME] }],
    );
    const statuses = await api.queueStatuses();
    expect(sent[0]).toMatchObject({ method: "POST", url: `${base}/callq_queues/status`, body: { data: {} } });
    expect(statuses[SALES]).toEqual({ loggedIn: 2, available: 1, stats: { estimatedWait: 0, averageWait: 4.5, recipientCount: 0, waiting: 3, total: 9, missed: 1, abandoned: 2 } });
    expect(await api.membership()).toEqual({ [SALES]: [ME] });
    expect(sent[1]?.url).toBe(`${base}/callq_queues/recipients?paginate=false`);
  });

  it("refuses an answer that is not the expected shape", async () => {
    const { api } = recordedApi(() => "nope");
    await expect(api.recipientStatus(ME)).rejects.toBeInstanceOf(ApiRequestError);
  });
});

describe("call-queue payloads", () => {
  it("reads a status: unknown states are Not-Logged-In, times are epoch ms, wiretap and calls", () => {
    const status = recipientStatusOf({
      availability_state: "Something-Else",
      wrapup_time_seconds: 5,
      queue_availability: { [SALES]: false, junk: "x" },
      wiretapping_recipient: ME,
      wiretap_mode: "barge",
      handling_call: { queue_id: SALES, caller_id_name: "Casey", queue_enter_time: G + 1 },
      stats: { last_action_time: G + 1_700_000_000, total_calls: 3 },
    });
    expect(status.state).toBe("Not-Logged-In");
    expect(status.lastActionAt).toBe(1_700_000_000_000);
    expect(status.queueAvailability).toEqual({ [SALES]: false });
    expect(status.wiretap).toEqual({ target: ME, mode: "barge" });
    expect(status.handlingCall).toMatchObject({ queueId: SALES, callerName: "Casey", enteredAt: 1000 });
    expect(status.totalCalls).toBe(3);
    expect(gregorianToMs(0)).toBe(0);
  });

  it("reads recipient events: state, the offered caller, per-queue availability, monitor", () => {
    const event = (name: string, data: Record<string, unknown>) => ({ name, routingKey: `callq.recipient.${ME}`, accountId: ACCOUNT, seq: 1, data });
    expect(recipientEventOf(event("offer", { availability_state: "Call-Offer", queue_id: SALES, caller_id_name: "Casey" }), ME)).toMatchObject({
      recipientId: ME,
      state: "Call-Offer",
      queueId: null,
      call: { queueId: SALES, callerName: "Casey" },
    });
    expect(recipientEventOf(event("away", { availability_state: "Ready", queue_id: SALES, queue_availability: { [SALES]: false } }), ME)).toMatchObject({
      state: "Ready",
      queueId: SALES,
      queueAvailability: { [SALES]: false },
      call: null,
    });
    expect(recipientEventOf(event("monitor", { active: true, target: "t", mode: "whisper" }), ME)).toMatchObject({ state: null, wiretap: { target: "t", mode: "whisper" } });
    expect(recipientEventOf(event("monitor", { active: false, target: "t", mode: "whisper" }), ME).wiretap).toBeNull();
  });
});
