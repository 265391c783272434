// Fakes of the server for the call-queue slices' tests: a call-queue API whose answers the test
// holds or gives, an event websocket the test pushes callq.* events through, a /v2 client with
// just what connect() reads, and a phone line whose calls the test rings. Plus the whole store
// around them, signed in and connected, with a manual clock and frames on that clock.
import type { AwayReasons, CallqApi, MonitorMode, QueueEntry, QueueSession, QueueStatus, RecipientEntry, RecipientStatus, RecipientStatusChange, RecipientStatusEntry, Staffing, StaffingWhatIf, WrapupAction } from "../../renderer/api/callq.js";
import type { EventStreamOptions } from "../../renderer/api/events.js";
import type { PlatformApi } from "../../renderer/api/platform.js";
import type { EventStreamLike } from "../../renderer/state/connection.js";
import type { CallInfo, PhoneLine, RegistrationState } from "../../renderer/phone/phone-line.js";
import type { FrameScheduler } from "../../renderer/state/callq-access.js";
import type { StoreDeps } from "../../renderer/state/store.js";
import { consoleStore, deferred, OWNER_ID } from "./console-store.js";

/** A staffing estimate with nothing measured. */
const NO_STAFFING: Staffing = { agentsNeeded: null, agentsNeededWithAbandonment: null, callsPerHour: 0, handleTime: null, windowMinutes: 60, targetPercent: 80, answeredWithinS: 20, loggedIn: 0, ready: 0 };

export { toGregorianSeconds as toGregorian } from "../../server/clock.js";

export function recipientStatus(partial: Partial<RecipientStatus> = {}): RecipientStatus {
  return {
    state: "Away",
    queueAvailability: {},
    offeredCall: null,
    handlingCall: null,
    wiretap: null,
    wiretappedBy: [],
    wrapupSeconds: 0,
    lastActionAt: 0,
    totalCalls: 0,
    missedCalls: 0,
    awayReason: null,
    awaySince: 0,
    missedOffers: 0,
    unavailableReason: null,
    dispositionPending: false,
    lastCall: null,
    day: null,
    ...partial,
  };
}

export function queueStatus(partial: Partial<QueueStatus["stats"]> = {}, counts: { loggedIn?: number; available?: number } = {}): QueueStatus {
  return {
    loggedIn: counts.loggedIn ?? 1,
    available: counts.available ?? 1,
    stats: { estimatedWait: 0, averageWait: 0, recipientCount: 1, waiting: 0, total: 0, missed: 0, abandoned: 0, ...partial },
  };
}

export interface Asked {
  method: string;
  args: unknown[];
}

/**
 * A call-queue API: each method answers what the test set with `answer(...)` or, with `hold`,
 * a promise the test settles by hand. Every call is recorded in `asked`.
 */
export function fakeCallqApi() {
  const asked: Asked[] = [];
  const held = new Map<string, ReturnType<typeof deferred<unknown>>[]>();
  const holding = new Set<string>();
  const answers = {
    queues: [] as QueueEntry[],
    membership: {} as Record<string, string[]>,
    queueStatuses: {} as Record<string, QueueStatus>,
    queueSessions: {} as Record<string, QueueSession[]>,
    queueStaffing: {} as Record<string, Staffing | Error>,
    recipients: [] as RecipientEntry[],
    recipientStatus: recipientStatus() as RecipientStatus | Error,
    recipientStatuses: {} as Record<string, RecipientStatusEntry>,
    setRecipientStatus: recipientStatus() as RecipientStatus | Error,
    wrapup: recipientStatus() as RecipientStatus | Error,
    disposition: recipientStatus() as RecipientStatus | Error,
    awayReasons: { reasons: [], engineReasons: [] } as AwayReasons | Error,
    monitor: undefined as undefined | Error,
  };

  function answer<T>(method: string, args: unknown[], value: () => T): Promise<T> {
    asked.push({ method, args });
    if (holding.has(method)) {
      const d = deferred<unknown>();
      held.set(method, [...(held.get(method) ?? []), d]);
      return d.promise as Promise<T>;
    }
    const v = value();
    return v instanceof Error ? Promise.reject(v) : Promise.resolve(v);
  }

  const api: CallqApi = {
    queues: () => answer("queues", [], () => answers.queues),
    membership: () => answer("membership", [], () => answers.membership),
    queueStatuses: (ids?: readonly string[]) =>
      answer("queueStatuses", [ids], () => (ids === undefined ? answers.queueStatuses : Object.fromEntries(ids.filter((id) => id in answers.queueStatuses).map((id) => [id, answers.queueStatuses[id] as QueueStatus])))),
    queueSessions: (queueId: string) => answer("queueSessions", [queueId], () => answers.queueSessions[queueId] ?? []),
    queueStaffing: (queueId: string, whatIf?: StaffingWhatIf) => answer("queueStaffing", whatIf === undefined ? [queueId] : [queueId, whatIf], () => answers.queueStaffing[queueId] ?? NO_STAFFING) as Promise<Staffing>,
    recipients: () => answer("recipients", [], () => answers.recipients),
    recipientStatus: (userId: string) => answer("recipientStatus", [userId], () => answers.recipientStatus) as Promise<RecipientStatus>,
    recipientStatuses: (ids: readonly string[]) =>
      answer("recipientStatuses", [ids], () => Object.fromEntries(ids.map((id) => [id, answers.recipientStatuses[id] ?? "not_logged_in"])) as Record<string, RecipientStatusEntry>),
    setRecipientStatus: (userId: string, status: RecipientStatusChange, queueId?: string, reason?: string) =>
      answer("setRecipientStatus", [userId, status, ...(queueId === undefined && reason === undefined ? [] : [queueId]), ...(reason === undefined ? [] : [reason])], () => answers.setRecipientStatus) as Promise<RecipientStatus>,
    setDisposition: (userId: string, disposition: { code: string; note: string; sessionId: string }) =>
      answer("setDisposition", [userId, disposition], () => answers.disposition) as Promise<RecipientStatus>,
    awayReasons: () => answer("awayReasons", [], () => answers.awayReasons) as Promise<AwayReasons>,
    wrapup: (userId: string, action: WrapupAction) => answer("wrapup", [userId, action], () => answers.wrapup) as Promise<RecipientStatus>,
    monitor: (supervisorId: string, target: string, mode: MonitorMode) => answer("monitor", [supervisorId, target, mode], () => answers.monitor) as Promise<void>,
  };

  return {
    api,
    asked,
    answers,
    /** Holds this method's answers until `release`. */
    hold: (method: string) => holding.add(method),
    /** Settles the oldest held call of `method` (the newest with `newest`) with `value` (an Error rejects). */
    async release(method: string, value: unknown, options: { newest?: boolean } = {}) {
      const list = held.get(method) ?? [];
      const chosen = options.newest === true ? list.at(-1) : list[0];
      if (chosen === undefined) throw new Error(`no held ${method} call`);
      list.splice(list.indexOf(chosen), 1);
      if (value instanceof Error) chosen.reject(value);
      else chosen.resolve(value);
      await new Promise((r) => setTimeout(r, 0));
    },
    calls: (method: string) => asked.filter((a) => a.method === method),
  };
}

/** The event websocket: `start()` goes online at once; `emit` hands the slices an event. */
export function fakeEventStream() {
  let options: EventStreamOptions | null = null;
  let seq = 0;
  const factory = (o: EventStreamOptions): EventStreamLike => {
    options = o;
    return {
      get lastSeq() {
        return seq;
      },
      start: () => o.onStatus("online", {}),
      stop: () => undefined,
      reconnectNow: () => undefined,
    };
  };
  return {
    factory,
    emit(routingKey: string, name: string, data: Record<string, unknown>) {
      if (options === null) throw new Error("the event stream was not opened");
      seq += 1;
      options.onEvent({ name, routingKey, accountId: options.accountId, seq, data: { account_id: options.accountId, ...data } });
    },
    /** The socket dropped and came back. */
    reconnect() {
      options?.onStatus("offline", { retryInMs: 1000 });
      options?.onStatus("online", {});
    },
  };
}

export function fakePlatform(profile: { isAdmin?: boolean; canMonitor?: boolean } = {}): PlatformApi {
  return {
    user: async (userId) => ({ id: userId, username: "agent1", firstName: "Alex", lastName: "Agent", isAdmin: profile.isAdmin ?? false, canMonitor: profile.canMonitor ?? false, isTrainer: profile.isAdmin ?? false, presenceId: "1002" }),
    devicesOf: async () => [{ id: "d1", name: "agent1 softphone", deviceType: "softphone", enabled: true }],
    sipCredentials: async () => ({ username: "agent1", password: "pw", realm: "demo.local" }),
    directory: async () => [],
    recentCalls: async () => [],
    liveCallIds: async () => [],
    transfer: async () => undefined,
    merge: async () => undefined,
  };
}

/** A phone line that registers at once; `ring` offers a call, and answers/hang-ups are recorded. */
export function fakePhoneLine() {
  const listeners = new Set<(call: CallInfo) => void>();
  const registrations = new Set<(state: RegistrationState) => void>();
  const answered: string[] = [];
  const hungUp: string[] = [];
  const calls = new Map<string, CallInfo>();
  const update = (call: CallInfo) => {
    calls.set(call.id, call);
    for (const l of listeners) l(call);
  };
  const line: PhoneLine = {
    registration: "registered",
    retryAt: null,
    lastError: null,
    onRegistration: (l) => {
      registrations.add(l);
      return () => registrations.delete(l);
    },
    onCall: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    register: async () => {
      for (const l of registrations) l("registered");
    },
    retryNow: () => undefined,
    stop: async () => undefined,
    call: async () => "out-1",
    answer: async (id) => {
      answered.push(id);
      const call = calls.get(id);
      if (call) update({ ...call, state: "active" });
    },
    reject: async () => undefined,
    hangup: async (id) => {
      hungUp.push(id);
      const call = calls.get(id);
      if (call) update({ ...call, state: "ended" });
    },
    hold: async () => undefined,
    setMuted: () => undefined,
    sendDtmf: () => true,
    setSpeaker: async () => undefined,
  };
  return {
    factory: () => line,
    answered,
    hungUp,
    ring(id: string, remoteName: string, remoteUser = "1002") {
      update({ id, callId: `call-${id}`, direction: "inbound", remoteUser, remoteName, state: "incoming", muted: false, offer: {} });
    },
    end(id: string) {
      const call = calls.get(id);
      if (call) update({ ...call, state: "ended" });
    },
  };
}

/** The whole store, signed in as OWNER_ID and connected, with the fakes above; frames are 16 ms of the manual clock. */
export async function callqConsole(options: { profile?: { isAdmin?: boolean; canMonitor?: boolean }; deps?: Partial<StoreDeps> } = {}) {
  const callq = fakeCallqApi();
  const events = fakeEventStream();
  const phone = fakePhoneLine();
  let frames = 0;
  const made: { clock?: { after(ms: number, run: () => void): () => void } } = {};
  const frame: FrameScheduler = (callback) => {
    frames += 1;
    if (made.clock === undefined) throw new Error("no clock yet");
    return made.clock.after(16, callback);
  };
  const console_ = consoleStore({
    callq: () => callq.api,
    eventStream: events.factory,
    platform: () => fakePlatform(options.profile),
    phone: phone.factory,
    frame,
    ...options.deps,
  });
  made.clock = console_.clock;
  await console_.signIn("agent1");
  await console_.store.getState().connect();
  await console_.clock.advance(0);
  return { ...console_, callq, events, phone, me: OWNER_ID, framesScheduled: () => frames };
}
