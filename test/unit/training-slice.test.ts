// The training slice through the whole store, with a fake training API: who may use the view
// (from the profile), the list, saving with the server's refusal kept per field, deleting,
// importing a file (and refusing what is not one before any request), previews (only the
// newest lands), and live runs (start, drive, faults, the live view's refresh until the run ends).
import { describe, expect, it, vi } from "vitest";
import { ApiRequestError } from "../../renderer/api/client.js";
import type { PreviewSummary, RunDoc, RunRow, RunStatus, ScenarioDoc, ScenarioRow, Scorecard, TrainingApi } from "../../renderer/api/training.js";
import { isTrainingView, RUN_REFRESH_MS, trainerAccess } from "../../renderer/state/training.js";
import { consoleStore, deferred, OWNER_ID } from "../helpers/console-store.js";

const httpError = (status: number, data: unknown = null) => new ApiRequestError("http", status, "", data, null, `answered ${status}`);

function summary(id: string, offered: number): PreviewSummary {
  return {
    scenario_id: id,
    name: "S",
    seed: 7,
    duration_s: 600,
    callers: offered,
    offered,
    answered: offered,
    abandoned: 0,
    timed_out: 0,
    texted: 0,
    abandoned_while_ringing: 0,
    service_level: { answered_within_s: 20, target_percent: 80, percent: 100, met: true },
    abandoned_percent: 0,
    average_speed_of_answer_s: 1,
    longest_wait_s: 2,
    average_talk_s: 60,
    average_handle_time_s: 70,
    handle_time_target_s: 300,
    offered_load_erlangs: 1,
    ended_at_s: 700,
    queues: [],
    agents: [],
    faults: [],
  };
}

function runDoc(id: string, status: RunStatus, waitS: number): RunDoc {
  return {
    id,
    scenario_id: "s1",
    scenario_name: "Monday",
    status,
    run_seconds: waitS,
    duration_s: 600,
    agents: [],
    callers: [{ index: 0, queue: "q", arrival_s: 0, persona: "P", caller_id_number: "+1", state: status === "ended" ? "ended" : "waiting", outcome: null, agent_id: null, wait_s: waitS }],
    timeline: [],
  };
}

function card(id: string, status: RunStatus, answered: number): Scorecard {
  return {
    run_id: id,
    scenario_name: "Monday",
    status,
    targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 300 },
    run: { callers: 1, offered: 1, answered, abandoned: 0, timed_out: 0, abandoned_while_ringing: 0, service_level: { answered_within_s: 20, target_percent: 80, percent: null, met: null }, average_speed_of_answer_s: null, digits_collected: 0, texts: 0, texts_answered: 0, average_text_response_s: null, text_response_met: null },
    people: [],
  };
}

function fakeTrainingApi() {
  const calls: string[] = [];
  /** The one run the fake knows: its status and how long its caller has waited. */
  const live = { status: "running" as RunStatus, waitS: 0, answered: 0 };
  const docs = new Map<string, ScenarioDoc>();
  let nextId = 0;
  const previews: { id: string; answer: ReturnType<typeof deferred<PreviewSummary>> }[] = [];
  let refuseSave: unknown = null;
  /** When set, the next read of the run answers (what the run was when asked) only once it settles. */
  let readGate: Promise<void> | null = null;
  /** When set, the next read of the runs' list answers these rows (what it was when asked) only once it settles. */
  let listGate: { rows: RunRow[]; gate: Promise<void> } | null = null;
  const api: TrainingApi = {
    async list() {
      calls.push("list");
      return [...docs.values()].map((d): ScenarioRow => ({ id: String(d.id), name: String(d.name), duration_s: Number(d.duration_s), seed: Number(d.seed) }));
    },
    async read(_c, id) {
      calls.push("read");
      const doc = docs.get(id);
      if (doc === undefined) throw httpError(404);
      return doc;
    },
    async save(_c, doc) {
      calls.push("save");
      if (refuseSave !== null) throw refuseSave;
      const id = typeof doc.id === "string" ? doc.id : `s${++nextId}`;
      const stored = { ...doc, id };
      docs.set(id, stored);
      return stored;
    },
    async remove(_c, id) {
      calls.push("remove");
      if (!docs.delete(id)) throw httpError(404);
    },
    async importFile(_c, file) {
      calls.push("importFile");
      const { format: _format, ...fields } = file;
      const stored = { ...fields, id: `s${++nextId}` };
      docs.set(stored.id, stored);
      return stored;
    },
    preview(_c, id) {
      calls.push("preview");
      const answer = deferred<PreviewSummary>();
      previews.push({ id, answer });
      return answer.promise;
    },
    async startRun(_c, scenarioId) {
      calls.push(`startRun ${scenarioId}`);
      live.status = "running";
      return runDoc("r1", live.status, live.waitS);
    },
    async listRuns() {
      calls.push("listRuns");
      const held = listGate;
      listGate = null;
      if (held !== null) {
        await held.gate;
        return held.rows;
      }
      return [{ id: "r1", scenario_id: "s1", scenario_name: "Monday", seed: 1, status: live.status, started: 1, ended: null }];
    },
    async readRun(_c, id) {
      calls.push("readRun");
      const read = runDoc(id, live.status, live.waitS);
      const gate = readGate;
      readGate = null;
      if (gate !== null) await gate;
      return read;
    },
    async driveRun(_c, id, action) {
      calls.push(`driveRun ${action}`);
      if (action === "resume" && live.status !== "paused") throw httpError(400, { action: { state: { message: "the run is running" } } });
      live.status = action === "pause" ? "paused" : action === "resume" ? "running" : "ended";
      return runDoc(id, live.status, live.waitS);
    },
    async injectFault(_c, id, fault) {
      calls.push(`injectFault ${JSON.stringify(fault)}`);
      if (live.status !== "running") throw httpError(409, { run: { state: { message: `the run is ${live.status}: resume it first` } } });
      return runDoc(id, live.status, live.waitS);
    },
    async scorecard(_c, id) {
      calls.push("scorecard");
      return card(id, live.status, live.answered);
    },
  };
  return {
    api,
    calls,
    docs,
    previews,
    live,
    refuse: (error: unknown) => (refuseSave = error),
    /** Holds the next read of the runs' list, answering `rows`, until the returned release. */
    holdNextList(rows: RunRow[]): () => void {
      const gate = deferred<void>();
      listGate = { rows, gate: gate.promise };
      return () => gate.resolve();
    },
    /** Holds the next read of the run until the returned release. */
    holdNextRead(): () => void {
      const gate = deferred<void>();
      readGate = gate.promise;
      return () => gate.resolve();
    },
  };
}

async function setup() {
  const fake = fakeTrainingApi();
  const { store, signIn, clock } = consoleStore({ trainingApi: fake.api });
  await signIn("admin");
  return { store, clock, ...fake };
}

const profile = { id: OWNER_ID, username: "trainer", firstName: "Tia", lastName: "Trainer", isAdmin: false, canMonitor: false, isTrainer: true, presenceId: "1003" };

describe("training slice: access", () => {
  it("is for trainers as the profile says, checking until it is read and unknown when it failed", async () => {
    const { store } = await setup();
    expect(trainerAccess(store.getState())).toBe("checking");
    store.setState({ connection: { ...store.getState().connection, profileError: "cannot reach" } });
    expect(trainerAccess(store.getState())).toBe("unknown");
    store.setState({ profile });
    expect(trainerAccess(store.getState())).toBe("trainer");
    expect(isTrainingView(store.getState())).toBe(true);
    store.setState({ profile: { ...profile, isTrainer: false } });
    expect(trainerAccess(store.getState())).toBe("refused");
    expect(isTrainingView(store.getState())).toBe(false);
    // Another session's profile says nothing about this one.
    store.setState({ profile: { ...profile, id: "c".repeat(32) }, connection: { ...store.getState().connection, profileError: null } });
    expect(trainerAccess(store.getState())).toBe("checking");
  });
});

describe("training slice: scenarios", () => {
  it("saves a new scenario, says so and reads the list again; a refusal keeps each field's words and changes nothing", async () => {
    const { store, calls, docs, refuse } = await setup();
    const saved = await store.getState().saveScenario({ name: "Monday", duration_s: 600, seed: 7 });
    expect(saved).toEqual({ saved: { name: "Monday", duration_s: 600, seed: 7, id: "s1" } });
    expect(store.getState().training.notice).toBe("Scenario “Monday” saved.");
    expect(store.getState().training.rows).toEqual([{ id: "s1", name: "Monday", duration_s: 600, seed: 7 }]);
    expect(calls).toEqual(["save", "list"]);

    refuse(httpError(400, { duration_s: { minimum: { message: "Value must be at least 60", target: 60 } }, "queues.0": { required: { message: "a queue names a queue_id or a number" }, unique: { message: "two entries name the same queue" } } }));
    const refused = await store.getState().saveScenario({ id: "s1", name: "Monday", duration_s: 10, seed: 7 });
    expect(refused).toEqual({
      error: "The scenario was not saved: the server refused it: duration_s: Value must be at least 60.",
      fields: [
        { field: "duration_s", message: "Value must be at least 60" },
        { field: "queues.0", message: "a queue names a queue_id or a number; two entries name the same queue" },
      ],
    });
    expect(docs.get("s1")?.duration_s).toBe(600);
    expect(calls).toEqual(["save", "list", "save"]);

    refuse(httpError(403));
    expect(await store.getState().saveScenario({ name: "X" })).toEqual({ error: "The scenario was not saved: only an admin may do this.", fields: [] });
  });

  it("reads one, says why it cannot, and deletes one, its preview going with it", async () => {
    const { store, previews } = await setup();
    await store.getState().saveScenario({ name: "A", duration_s: 600, seed: 1 });
    expect(await store.getState().readScenario("s1")).toEqual({ name: "A", duration_s: 600, seed: 1, id: "s1" });
    expect(await store.getState().readScenario("nope")).toBe("The scenario could not be read: it no longer exists (someone may have deleted it).");

    const running = store.getState().previewScenario("s1");
    expect(store.getState().training.preview).toEqual({ scenarioId: "s1", running: true, summary: null, error: null });
    previews[0]?.answer.resolve(summary("s1", 3));
    await running;
    expect(store.getState().training.preview.summary?.offered).toBe(3);
    expect(await store.getState().deleteScenario("s1")).toBe(true);
    expect(store.getState().training).toMatchObject({ rows: [], notice: "Scenario deleted.", preview: { scenarioId: null, summary: null } });
    expect(await store.getState().deleteScenario("s1")).toBe(false);
    expect(store.getState().training.error).toBe("The scenario was not deleted: it no longer exists (someone may have deleted it).");
  });

  it("imports a file as a new scenario; what is not a scenario file is refused in words before any request", async () => {
    const { store, calls } = await setup();
    expect(await store.getState().importScenario("{ not json")).toBeNull();
    expect(store.getState().training.error).toMatch(/^The file was not imported: it is not JSON/);
    expect(await store.getState().importScenario("[1, 2]")).toBeNull();
    expect(store.getState().training.error).toMatch(/^The file was not imported: it is not a scenario file/);
    expect(calls).toEqual([]);

    const imported = await store.getState().importScenario(JSON.stringify({ format: "switchboard.training_scenario.v1", name: "Shared", duration_s: 900, seed: 3 }));
    expect(imported).toEqual({ name: "Shared", duration_s: 900, seed: 3, id: "s1" });
    expect(store.getState().training).toMatchObject({ error: null, notice: "Scenario “Shared” imported.", rows: [{ id: "s1", name: "Shared" }] });
    expect(calls).toEqual(["importFile", "list"]);
  });
});

describe("training slice: preview", () => {
  it("shows the newest preview's figures only, and a failure in words", async () => {
    const { store, previews } = await setup();
    const first = store.getState().previewScenario("a");
    const second = store.getState().previewScenario("b");
    previews[1]?.answer.resolve(summary("b", 5));
    await second;
    previews[0]?.answer.resolve(summary("a", 9));
    await first;
    expect(store.getState().training.preview).toMatchObject({ scenarioId: "b", running: false, summary: { scenario_id: "b", offered: 5 } });

    const failed = store.getState().previewScenario("b");
    previews[2]?.answer.reject(httpError(400, { scenario: { too_big: { message: "a preview runs at most 20000 callers" } } }));
    await failed;
    expect(store.getState().training.preview).toEqual({ scenarioId: "b", running: false, summary: null, error: "The preview did not run: the server refused it: scenario: a preview runs at most 20000 callers." });
  });
});

describe("training slice: live runs", () => {
  it("lists the runs from the newest read: a read asked before a start and answered after it does not leave the new run out; reading meanwhile", async () => {
    const { store, holdNextList } = await setup();
    // The view's read of the list, asked before the run started, answers (no runs) last.
    const release = holdNextList([]);
    const viewRead = store.getState().loadRuns();
    expect(store.getState().training.runs.reading).toBe(true);
    await store.getState().startRun("s1");
    expect(store.getState().training.runs.rows.map((row) => row.id)).toEqual(["r1"]);
    release();
    await viewRead;
    expect(store.getState().training.runs.rows.map((row) => row.id)).toEqual(["r1"]);
    expect(store.getState().training.runs.reading).toBe(false);
  });

  it("starts a run and opens it with its scorecard; pause and stop say so; a refusal is in words", async () => {
    const { store, calls } = await setup();
    await store.getState().startRun("s1");
    expect(store.getState().training.runs).toMatchObject({ busy: false, error: null, current: { id: "r1", status: "running" }, scorecard: { run_id: "r1" }, rows: [{ id: "r1" }] });
    expect(store.getState().training.notice).toBe("Run of “Monday” started.");
    expect(calls).toEqual(["startRun s1", "readRun", "scorecard", "listRuns"]);
    await store.getState().driveRun("pause");
    expect(store.getState().training.runs.current?.status).toBe("paused");
    expect(store.getState().training.notice).toBe("Run paused.");
    await store.getState().driveRun("stop");
    expect(store.getState().training.runs).toMatchObject({ current: { status: "ended" }, scorecard: { status: "ended" }, rows: [{ status: "ended" }] });
    await store.getState().driveRun("resume");
    expect(store.getState().training.runs.error).toBe("The run was not resumed: the server refused it: action: the run is running.");
    expect(store.getState().training.runs.current?.status).toBe("ended");
  });

  it("a pause then a resume: the pause's read of the run, answered last, does not show the run paused", async () => {
    const { store, holdNextRead } = await setup();
    await store.getState().startRun("s1");
    // Pause: the server pauses, and the read of the run that follows is answered (paused) but held.
    const release = holdNextRead();
    const paused = store.getState().driveRun("pause");
    await vi.waitFor(() => expect(store.getState().training.runs.current?.status).toBe("paused"));
    // Resume, read back running, before the pause's read reaches the page.
    await store.getState().driveRun("resume");
    expect(store.getState().training.runs.current?.status).toBe("running");
    release();
    await paused;
    expect(store.getState().training.runs.current?.status).toBe("running");
  });

  it("a fault injected while a read of the run is on its way: that older read does not land over the fault's answer", async () => {
    const { store, clock, holdNextRead, live } = await setup();
    await store.getState().startRun("s1");
    const stop = store.getState().followRun();
    // The live view's read (the caller waited 0 s) is held; meanwhile a fault, answered with 9 s.
    const release = holdNextRead();
    void clock.advance(RUN_REFRESH_MS);
    live.waitS = 9;
    await store.getState().injectFault({ kind: "burst", count: 3 });
    expect(store.getState().training.runs.current?.callers[0]?.wait_s).toBe(9);
    release();
    await vi.waitFor(() => expect(store.getState().training.runs.busy).toBe(false));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.getState().training.runs.current?.callers[0]?.wait_s).toBe(9);
    stop();
  });

  it("injects the trainer's fault into the open run and says so; a refusal is in words", async () => {
    const { store, calls } = await setup();
    await store.getState().startRun("s1");
    calls.length = 0;
    await store.getState().injectFault({ kind: "burst", count: 3 });
    expect(calls).toEqual(['injectFault {"kind":"burst","count":3}', "readRun", "scorecard"]);
    expect(store.getState().training.notice).toBe("Fault injected: a burst of callers.");
    expect(store.getState().training.runs).toMatchObject({ busy: false, error: null });
    await store.getState().driveRun("pause");
    await store.getState().injectFault({ kind: "webhook_failure", duration_s: 30 });
    expect(store.getState().training.runs.error).toBe("The fault was not injected: the run is not running (resume it first, or it has ended).");
    expect(store.getState().training.runs.busy).toBe(false);
  });

  it("the live view reads the run and its scorecard every second until it ends, then lists it as ended", async () => {
    const { store, clock, calls, live } = await setup();
    await store.getState().startRun("s1");
    const stop = store.getState().followRun();
    calls.length = 0;
    live.waitS = 4;
    live.answered = 1;
    await clock.advance(RUN_REFRESH_MS);
    expect(store.getState().training.runs).toMatchObject({ current: { callers: [{ wait_s: 4 }] }, scorecard: { run: { answered: 1 } } });
    expect(calls).toEqual(["readRun", "scorecard"]);
    live.status = "ended";
    await clock.advance(RUN_REFRESH_MS);
    expect(store.getState().training.runs.rows[0]?.status).toBe("ended");
    expect(calls).toEqual(["readRun", "scorecard", "readRun", "scorecard", "listRuns"]);
    // Ended: nothing more to read.
    await clock.advance(3 * RUN_REFRESH_MS);
    expect(calls).toHaveLength(5);
    stop();
  });
});
