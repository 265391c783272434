// Training runs as the tests drive them through the API: a scenario made and a run of it started,
// the run read, its timeline's entries of one name, an action on it, and a wait until its callers
// are where the test needs them. The same for an in-process server (startApi) and for serve mode
// (useFloor), each reaching the account's API its own way.
import { expect } from "vitest";
import { poll } from "./poll.js";

/** A request under /v2/accounts/{the account}, as a user allowed to run training. */
export type AccountCall = <T>(method: string, path: string, data?: unknown) => Promise<{ status: number; body: { data: T } }>;

/** The part of a run's caller every wait reads. */
export interface RunCaller {
  state: string;
}

/** A run's timeline entry: each test's own type adds the fields it reads. */
export interface TimelineEntry {
  name: string;
}

/** A run as far as the waits read it: each test's own RunDoc adds what it reads. */
export interface WithCallers {
  callers: RunCaller[];
}
export interface WithTimeline<Entry extends TimelineEntry> {
  timeline: Entry[];
}

export interface AwaitCallers<Doc extends WithCallers> {
  /** What the wait is for, said when it times out. */
  what?: string;
  /** When the wait is over; by default, every caller of the run has ended. */
  done?: (run: Doc) => boolean;
  /** Done each time before the run is read (a trainee's console accepting what rings). */
  each?: () => Promise<void>;
  timeoutMs?: number;
  intervalMs?: number;
}

export function trainingRuns(call: AccountCall) {
  const readRun = async <Doc,>(id: string): Promise<Doc> => (await call<Doc>("GET", `/training_runs/${id}`)).body.data;
  return {
    /** Makes a scenario; its id. */
    async scenario(data: Record<string, unknown>): Promise<string> {
      const created = await call<{ id: string }>("PUT", "/training_scenarios", data);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.data.id;
    },

    /** Starts a run of the scenario (its id, or a document made first); the run's id. */
    async startRun(scenario: string | Record<string, unknown>): Promise<string> {
      const scenarioId = typeof scenario === "string" ? scenario : await this.scenario(scenario);
      const started = await call<{ id: string }>("POST", `/training_scenarios/${scenarioId}/runs`);
      expect(started.status, JSON.stringify(started.body)).toBe(201);
      return started.body.data.id;
    },

    readRun,

    /** The run's timeline entries of one name. */
    async entries<Entry extends TimelineEntry = TimelineEntry>(id: string, name: string): Promise<Entry[]> {
      return (await readRun<WithTimeline<Entry>>(id)).timeline.filter((e) => e.name === name);
    },

    /** POST {action, ...} to the run. */
    act(id: string, data: Record<string, unknown>) {
      return call<Record<string, Record<string, unknown>>>("POST", `/training_runs/${id}`, data);
    },

    /** Waits until the run's timeline has an entry of that name (`count` of them); those entries. */
    async awaitEntries<Entry extends TimelineEntry = TimelineEntry>(id: string, name: string, what: string, count = 1, timeoutMs = 20_000): Promise<Entry[]> {
      return poll(
        what,
        async () => {
          const found = (await readRun<WithTimeline<Entry>>(id)).timeline.filter((e) => e.name === name);
          return found.length >= count ? found : undefined;
        },
        timeoutMs,
      );
    },

    /**
     * Moves a run's time on to `toS` seconds of run time, by moving the server's clock (serve mode's
     * `--clock controllable`, which the run's clock follows): the run's timers up to then (wrap-ups,
     * arrivals, patience) run in order, as they would on the wall's. From the run's `run_seconds` as
     * read just before, so it lands at `toS` plus the time the read and the move took; nothing if
     * the run is already past it.
     */
    async skipTo(id: string, toS: number, move: (ms: number) => Promise<number>): Promise<void> {
      const at = (await readRun<{ run_seconds?: unknown }>(id)).run_seconds;
      if (typeof at !== "number") throw new Error(`run ${id} has no run_seconds`);
      if (toS > at) await move(Math.round((toS - at) * 1000));
    },

    /** Waits until the run's callers are done (every one ended unless `done` says otherwise); the run then. */
    async awaitCallers<Doc extends WithCallers>(id: string, options: AwaitCallers<Doc> = {}): Promise<Doc> {
      const done = options.done ?? ((run: Doc) => run.callers.every((c) => c.state === "ended"));
      let last: Doc | undefined;
      try {
        return await poll(
          options.what ?? "every caller of the run gone",
          async () => {
            await options.each?.();
            last = await readRun<Doc>(id);
            return done(last) ? last : undefined;
          },
          options.timeoutMs ?? 40_000,
          options.intervalMs,
        );
      } catch (error) {
        // Where the callers were when the wait gave up.
        throw new Error(`${error instanceof Error ? error.message : String(error)}; the run's callers then: ${JSON.stringify(last?.callers)}`, { cause: error });
      }
    },
  };
}

export type TrainingRuns = ReturnType<typeof trainingRuns>;
