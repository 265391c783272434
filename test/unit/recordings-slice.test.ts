// The recordings slice through the whole store, with a fake recordings API and a manual clock:
// filters become the API's query parameters (dates in Gregorian seconds, local days), paging walks
// forward and back by start keys, a late answer never overwrites a newer page, and deleting.
import { describe, expect, it } from "vitest";
import type { AccountConnection, Page } from "../../renderer/api/account.js";
import { ApiRequestError } from "../../renderer/api/client.js";
import type { Recording, RecordingsApi, RecordingsQuery } from "../../renderer/api/recordings.js";
import { fromGregorianSeconds, toGregorianSeconds } from "../../renderer/api/gregorian.js";
import { interactionParts, recordingQuery } from "../../renderer/state/recordings.js";
import { ACCOUNT_ID, consoleStore, deferred, TEST_ORIGIN } from "../helpers/console-store.js";
import { callqConsole } from "../helpers/fake-callq.js";

const rec = (id: string, caller = "+14155550100"): Recording => ({ id, caller_id_number: caller, duration_ms: 3000 });

interface Asked {
  connection: AccountConnection;
  query: RecordingsQuery;
  answer: ReturnType<typeof deferred<Page<Recording>>>;
}

/** A recordings API whose list answers the test gives by hand; deletes answer at once. */
function fakeRecordingsApi() {
  const asked: Asked[] = [];
  const removed: string[] = [];
  let removeFails: unknown = null;
  const api: RecordingsApi = {
    list(connection, query) {
      const answer = deferred<Page<Recording>>();
      asked.push({ connection, query, answer });
      return answer.promise;
    },
    async remove(_connection, id) {
      if (removeFails !== null) throw removeFails;
      removed.push(id);
    },
    queues: async () => [
      { id: "q2", name: "Support" },
      { id: "q1", name: "Sales" },
    ],
  };
  const last = () => {
    const entry = asked.at(-1);
    if (entry === undefined) throw new Error("the list was not asked");
    return entry;
  };
  return { api, asked, removed, last, failRemove: (error: unknown) => (removeFails = error) };
}

async function setup() {
  const fake = fakeRecordingsApi();
  const { store, clock, signIn } = consoleStore({ recordingsApi: fake.api });
  await signIn();
  return { store, clock, ...fake };
}

describe("recording filters as query parameters", () => {
  it("bounds dates by local midnights in Gregorian seconds and passes caller and queue as exact filters", () => {
    const query = recordingQuery({ from: "2025-05-01", to: "2025-05-03", caller: " +14155550100 ", queueId: "q1" });
    if ("error" in query) throw new Error(query.error);
    expect(query.params).toEqual({
      created_from: String(toGregorianSeconds(new Date(2025, 4, 1).getTime())),
      created_to: String(toGregorianSeconds(new Date(2025, 4, 4).getTime()) - 1),
      filter_caller_id_number: "+14155550100",
      filter_queue_id: "q1",
    });
    expect(fromGregorianSeconds(toGregorianSeconds(Date.UTC(2025, 0, 1)))).toBe(Date.UTC(2025, 0, 1));
    expect(recordingQuery({ from: "", to: "", caller: "", queueId: "" })).toEqual({ params: {} });
  });

  it("refuses a start after the end, and dates that do not exist", () => {
    expect(recordingQuery({ from: "2025-05-04", to: "2025-05-03", caller: "", queueId: "" })).toEqual({ error: "The start date is after the end date." });
    expect(recordingQuery({ from: "2025-02-30", to: "", caller: "", queueId: "" })).toEqual({ error: "The start date is not a date." });
    expect(recordingQuery({ from: "", to: "yesterday", caller: "", queueId: "" })).toEqual({ error: "The end date is not a date." });
  });
});

describe("recordings slice", () => {
  it("does nothing while signed out", async () => {
    const fake = fakeRecordingsApi();
    const { store } = consoleStore({ recordingsApi: fake.api });
    await store.getState().loadRecordings();
    expect(fake.asked).toHaveLength(0);
  });

  it("reads the first page with the session's connection, then pages forward and back by start keys", async () => {
    const { store, last } = await setup();
    const first = store.getState().loadRecordings();
    expect(store.getState().recordings.loading).toBe(true);
    expect(last().connection).toEqual({ serverUrl: TEST_ORIGIN, token: "token-admin", accountId: ACCOUNT_ID });
    expect(last().query).toEqual({ pageSize: 25, filters: {} });
    last().answer.resolve({ rows: [rec("r1"), rec("r2")], nextStartKey: "k2" });
    await first;
    expect(store.getState().recordings).toMatchObject({ loading: false, nextStartKey: "k2", pageKeys: [undefined] });
    expect(store.getState().recordings.rows.map((r) => r.id)).toEqual(["r1", "r2"]);

    const second = store.getState().nextRecordingsPage();
    expect(last().query.startKey).toBe("k2");
    last().answer.resolve({ rows: [rec("r3")], nextStartKey: null });
    await second;
    expect(store.getState().recordings).toMatchObject({ pageKeys: [undefined, "k2"], nextStartKey: null });

    // The last page has no next one: nothing is asked.
    const count = store.getState().recordings.rows.length;
    await store.getState().nextRecordingsPage();
    expect(store.getState().recordings.rows).toHaveLength(count);

    const back = store.getState().previousRecordingsPage();
    expect(last().query.startKey).toBeUndefined();
    last().answer.resolve({ rows: [rec("r1"), rec("r2")], nextStartKey: "k2" });
    await back;
    expect(store.getState().recordings.pageKeys).toEqual([undefined]);
  });

  it("applies filters from the first page, and keeps the list when the filters are refused", async () => {
    const { store, asked, last } = await setup();
    const load = store.getState().loadRecordings();
    last().answer.resolve({ rows: [rec("r1")], nextStartKey: "k1" });
    await load;

    const applied = store.getState().applyRecordingFilters({ from: "", to: "", caller: "1002", queueId: "" });
    expect(last().query).toEqual({ pageSize: 25, filters: { filter_caller_id_number: "1002" } });
    last().answer.resolve({ rows: [], nextStartKey: null });
    expect(await applied).toBe(true);
    expect(store.getState().recordings).toMatchObject({ rows: [], filters: { caller: "1002" } });

    const before = asked.length;
    expect(await store.getState().applyRecordingFilters({ from: "2025-05-02", to: "2025-05-01", caller: "", queueId: "" })).toBe(false);
    expect(asked).toHaveLength(before);
    expect(store.getState().recordings.error).toBe("The start date is after the end date.");
    expect(store.getState().recordings.filters.caller).toBe("1002");
  });

  it("lets only the newest answer land when an earlier one arrives late", async () => {
    const { store, asked } = await setup();
    const slow = store.getState().applyRecordingFilters({ from: "", to: "", caller: "111", queueId: "" });
    const fast = store.getState().applyRecordingFilters({ from: "", to: "", caller: "222", queueId: "" });
    asked[1]?.answer.resolve({ rows: [rec("new", "222")], nextStartKey: null });
    await fast;
    asked[0]?.answer.resolve({ rows: [rec("old", "111")], nextStartKey: "x" });
    expect(await slow).toBe(false);
    expect(store.getState().recordings.rows.map((r) => r.id)).toEqual(["new"]);
    expect(store.getState().recordings.nextStartKey).toBeNull();
  });

  it("shows the last N days ending today by the injected clock", async () => {
    const { store, clock, last } = await setup();
    const shown = store.getState().showRecentRecordings(7);
    const today = new Date(clock.now());
    const firstDay = new Date(today.getFullYear(), today.getMonth(), today.getDate() - 6);
    const nextDay = new Date(today.getFullYear(), today.getMonth(), today.getDate() + 1);
    expect(last().query.filters).toEqual({
      created_from: String(toGregorianSeconds(firstDay.getTime())),
      created_to: String(toGregorianSeconds(nextDay.getTime()) - 1),
    });
    last().answer.resolve({ rows: [], nextStartKey: null });
    await shown;
    expect(store.getState().recordings.filters.to).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    await clock.advance(3 * 24 * 3600 * 1000);
    // The other filters come along: the ones in force, or those given (the form's).
    const later = store.getState().showRecentRecordings(1, { from: "", to: "", caller: "1002", queueId: "" });
    expect(last().query.filters.filter_caller_id_number).toBe("1002");
    expect(last().query.filters.created_from).toBe(String(toGregorianSeconds(new Date(today.getFullYear(), today.getMonth(), today.getDate() + 3).getTime())));
    last().answer.resolve({ rows: [], nextStartKey: null });
    await later;
  });

  it("deletes a recording: the row leaves the list with a notice; a refusal keeps it and says why", async () => {
    const { store, last, removed, failRemove } = await setup();
    const load = store.getState().loadRecordings();
    last().answer.resolve({ rows: [rec("r1"), rec("r2")], nextStartKey: null });
    await load;

    expect(await store.getState().deleteRecording("r1")).toBe(true);
    expect(removed).toEqual(["r1"]);
    expect(store.getState().recordings).toMatchObject({ deleting: null, notice: "Recording deleted." });
    expect(store.getState().recordings.rows.map((r) => r.id)).toEqual(["r2"]);

    failRemove(new ApiRequestError("http", 403, "forbidden", null, null, "DELETE answered 403"));
    expect(await store.getState().deleteRecording("r2")).toBe(false);
    expect(store.getState().recordings.rows.map((r) => r.id)).toEqual(["r2"]);
    expect(store.getState().recordings.error).toBe("The recording was not deleted: only an admin may do this.");
  });

  it("a recording deleted while a read of the page is on its way stays gone when that read answers", async () => {
    const { store, asked, removed } = await setup();
    const first = store.getState().loadRecordings();
    asked[0]?.answer.resolve({ rows: [rec("r1"), rec("r2")], nextStartKey: null });
    await first;
    // The page is read again (the agent came back to the view); the server answers with r1 and r2,
    // but the answer reaches the page only after r1 was deleted.
    const again = store.getState().loadRecordings();
    expect(await store.getState().deleteRecording("r1")).toBe(true);
    expect(removed).toEqual(["r1"]);
    asked[1]?.answer.resolve({ rows: [rec("r1"), rec("r2")], nextStartKey: null });
    await again;
    expect(store.getState().recordings.rows.map((r) => r.id)).toEqual(["r2"]);
    // A read asked after the delete shows what the server has.
    const later = store.getState().loadRecordings();
    asked[2]?.answer.resolve({ rows: [rec("r2"), rec("r3")], nextStartKey: null });
    await later;
    expect(store.getState().recordings.rows.map((r) => r.id)).toEqual(["r2", "r3"]);
  });

  it("offers the account's queues by name for the queue filter", async () => {
    const { store } = await setup();
    expect(store.getState().recordingQueues).toBeNull();
    await store.getState().loadRecordingQueues();
    expect(store.getState().recordingQueues).toEqual([
      { id: "q1", name: "Sales" },
      { id: "q2", name: "Support" },
    ]);
  });
});

describe("which calls are recorded now", () => {
  it("follows the server's RECORD_START and RECORD_STOP call events, forgets an ended call, and empties on sign-out", async () => {
    const { store, events } = await callqConsole({ deps: { recordingsApi: fakeRecordingsApi().api } });
    expect(store.getState().recordingCalls).toEqual([]);
    events.emit("call.RECORD_START.call-1", "RECORD_START", { call_id: "call-1" });
    events.emit("call.RECORD_START.call-2", "RECORD_START", { call_id: "call-2" });
    events.emit("call.RECORD_START.call-1", "RECORD_START", { call_id: "call-1" });
    expect(store.getState().recordingCalls).toEqual(["call-1", "call-2"]);
    events.emit("call.RECORD_STOP.call-1", "RECORD_STOP", { call_id: "call-1" });
    events.emit("call.CHANNEL_ANSWER.call-2", "CHANNEL_ANSWER", { call_id: "call-2" });
    expect(store.getState().recordingCalls).toEqual(["call-2"]);
    events.emit("call.CHANNEL_DESTROY.call-2", "CHANNEL_DESTROY", { call_id: "call-2" });
    expect(store.getState().recordingCalls).toEqual([]);
    events.emit("call.RECORD_START.call-3", "RECORD_START", { call_id: "call-3" });
    await store.getState().signOut();
    expect(store.getState().recordingCalls).toEqual([]);
  });
});

describe("the parts of one interaction", () => {
  it("numbers the rows sharing an interaction_id oldest first, and leaves lone rows unnumbered", () => {
    const rows: Recording[] = [
      { id: "r3", interaction_id: "ix-1", start: 300 },
      { id: "r2", interaction_id: "ix-2", start: 200 },
      { id: "r1", interaction_id: "ix-1", start: 100 },
      { id: "r0", start: 50 },
    ];
    const parts = interactionParts(rows);
    expect(parts.get("r1")).toEqual({ part: 1, of: 2 });
    expect(parts.get("r3")).toEqual({ part: 2, of: 2 });
    expect(parts.has("r2")).toBe(false);
    expect(parts.has("r0")).toBe(false);
  });
});
