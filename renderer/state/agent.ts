// The agent slice: the signed-in user's state as a call-queue recipient, always as the server
// has it. The status is read when the event websocket comes online and again after each of the
// user's callq.recipient events (an event's state shows at once, the read brings the rest: the
// time of the change, wrap-up left, per-queue availability). Buttons ask the server and show what
// it answers; nothing is changed on the agent's side before the server says so.
import type { StateCreator } from "zustand/vanilla";
import { ApiRequestError } from "../api/client.js";
import { callqEventKind, recipientEventOf, type AgentRequest, type AwayReasons, type RecipientStatus, type RecipientStatusChange } from "../api/callq.js";
import { errorMessage, requestErrorText } from "../api/error-text.js";
import { untilNextDay } from "./agent-day.js";
import { callqAccess, type CallqDeps } from "./callq-access.js";
import { onConnectionChange } from "./connection-watch.js";
import type { AppState } from "./store.js";

export interface AgentState {
  /** The server's status of this user; null until read. */
  status: RecipientStatus | null;
  /** False when the user is no call-queue recipient (callq.enabled is not set); null until known. */
  isRecipient: boolean | null;
  /** Clock ms the current state began: the server's last_action_time (an event's arrival until it is read). */
  since: number | null;
  /** Clock ms the wrap-up ends, while in Wrapup-Time. */
  wrapupEndsAt: number | null;
  /** The request on its way, so its button does not fire twice. */
  pending: AgentRequest | null;
  /** Why the last request failed; null when it did not (kept until the next request). */
  error: string | null;
  /** Why the status could not be read; null once it was. */
  readError: string | null;
  /** The account's Away reasons and the labels of the server's own; empty until read. */
  awayReasons: AwayReasons;
  /** The disposition on its way to the server. */
  savingDisposition: boolean;
  /** Why the last disposition was refused; null when it was not. */
  dispositionError: string | null;
}

export interface AgentSlice {
  agent: AgentState;
  /** Reads the status now (and keeps reading after each of the user's events). */
  loadAgentStatus(): Promise<void>;
  /** Login, logout, Ready or Away (with one of the account's reasons). Resolves true once the server took it. */
  setAgentStatus(status: RecipientStatusChange, reason?: string): Promise<boolean>;
  /** The disposition of the queue call handled now or last: a code of its queue and a note. */
  setDisposition(code: string, note: string): Promise<boolean>;
  /** Ready (true) or Away (false) for one queue only. */
  setQueueAvailability(queueId: string, ready: boolean): Promise<boolean>;
  extendWrapup(): Promise<boolean>;
  cancelWrapup(): Promise<boolean>;
  /**
   * Before signing out: log out of the queues, or stay in them Away. True once the server took
   * it; the sign-out goes on either way (a logged-in agent without a phone gets no offers).
   */
  leaveQueues(choice: "logout" | "away"): Promise<boolean>;
}

const EMPTY: AgentState = {
  status: null,
  isRecipient: null,
  since: null,
  wrapupEndsAt: null,
  pending: null,
  error: null,
  readError: null,
  awayReasons: { reasons: [], engineReasons: [] },
  savingDisposition: false,
  dispositionError: null,
};

/** After local midnight, the new day is read this much later (the server's clock may be a moment behind). */
const NEW_DAY_READ_DELAY_MS = 2_000;

export function createAgentSlice(deps: CallqDeps): StateCreator<AppState, [], [], AgentSlice> {
  const callqOf = callqAccess(deps);
  return (set, get, store) => {
    let listening: (() => void) | null = null;
    /** Bumped by each of the user's events: a status read or answer from before it is stale. */
    let events = 0;
    let reading = false;
    let readAgain = false;
    /** Cancels the read at the next local midnight, when the day's figures start again. */
    let cancelNewDay: (() => void) | null = null;

    function apply(status: RecipientStatus): void {
      const now = deps.clock.now();
      set((s) => ({
        agent: {
          ...s.agent,
          status,
          isRecipient: true,
          since: status.lastActionAt > 0 ? status.lastActionAt : s.agent.since,
          // A wrap-up with no time left has no end of its own: it waits for the agent (or their disposition).
          wrapupEndsAt: status.state === "Wrapup-Time" && status.wrapupSeconds > 0 ? now + status.wrapupSeconds * 1000 : null,
          readError: null,
        },
      }));
      // Nothing happens at midnight on the agent's side, so no event brings the new day: read it then.
      cancelNewDay?.();
      cancelNewDay = status.day === null ? null : deps.clock.after(untilNextDay(now) + NEW_DAY_READ_DELAY_MS, () => void get().loadAgentStatus());
    }

    function listen(): void {
      listening ??= get().onPlatformEvent((event) => {
        const me = get().session?.ownerId;
        const kind = callqEventKind(event);
        if (me === undefined || kind === null || kind.kind !== "recipient" || kind.id !== me) return;
        events += 1;
        const change = recipientEventOf(event, me);
        const now = deps.clock.now();
        set((s) => {
          const current = s.agent.status;
          if (current === null) return s;
          const state = change.state ?? current.state;
          const status: RecipientStatus = {
            ...current,
            state,
            queueAvailability: change.queueAvailability ?? current.queueAvailability,
            offeredCall: state === "Call-Offer" ? (change.call ?? current.offeredCall) : null,
            handlingCall: state === "On-A-Call" ? (change.call ?? current.handlingCall) : state === "Wrapup-Time" ? current.handlingCall : null,
            wiretap: change.name === "monitor" ? change.wiretap : current.wiretap,
            ...(change.state !== null ? change.reasons : {}),
          };
          // A new Away reason starts its own time.
          const changed = change.state !== null && (change.state !== current.state || change.name === "wrapup" || (change.name === "away" && change.reasons.awayReason !== current.awayReason));
          return {
            agent: {
              ...s.agent,
              status,
              since: changed ? now : s.agent.since,
              wrapupEndsAt:
                state !== "Wrapup-Time" ? null : change.wrapupSeconds === null ? s.agent.wrapupEndsAt : change.wrapupSeconds > 0 ? now + change.wrapupSeconds * 1000 : null,
            },
          };
        });
        void get().loadAgentStatus();
      });
    }

    /**
     * The state change asked while another was on its way (newest wins), sent once that one is
     * answered: a quick Away then Ready (Alt+W, Alt+Y) ends Ready, as the agent meant.
     */
    let next: { kind: RecipientStatusChange; ask: () => Promise<RecipientStatus>; settle: (taken: boolean) => void } | null = null;

    /** One request; its answer is shown unless an event came in meanwhile (a read follows that). */
    async function request(kind: AgentRequest, ask: () => Promise<RecipientStatus>): Promise<boolean> {
      const pending = get().agent.pending;
      if (pending !== null) {
        // Wrap-up and per-queue requests are not sent twice; a state change waits its turn.
        if (!isStateChange(kind) || !isStateChange(pending)) return false;
        next?.settle(false);
        next = null;
        if (kind === pending) return false;
        return new Promise((settle) => {
          next = { kind, ask, settle };
        });
      }
      const before = events;
      set((s) => ({ agent: { ...s.agent, pending: kind, error: null } }));
      let taken: boolean;
      try {
        const status = await ask();
        set((s) => ({ agent: { ...s.agent, pending: null } }));
        if (events === before) apply(status);
        taken = true;
      } catch (error) {
        set((s) => ({ agent: { ...s.agent, pending: null, error: requestErrorText(kind, error) } }));
        // What the server has now, whatever the refusal was about.
        void get().loadAgentStatus();
        taken = false;
      }
      const waiting = next;
      next = null;
      if (waiting !== null) void request(waiting.kind, waiting.ask).then(waiting.settle);
      return taken;
    }

    async function loadAwayReasons(): Promise<void> {
      const api = callqOf(get());
      if (api === null) return;
      try {
        const awayReasons = await api.awayReasons();
        set((s) => ({ agent: { ...s.agent, awayReasons } }));
      } catch {
        // A server without reasons (the hosted service): Away is offered alone.
      }
    }

    onConnectionChange(store, {
      online: () => {
        void get().loadAgentStatus();
        void loadAwayReasons();
      },
      signedOut: () => {
        next?.settle(false);
        next = null;
        cancelNewDay?.();
        cancelNewDay = null;
        set({ agent: EMPTY });
      },
    });

    return {
      agent: EMPTY,

      async loadAgentStatus() {
        const state = get();
        const api = callqOf(state);
        const me = state.session?.ownerId;
        if (api === null || me === undefined) return;
        listen();
        if (reading) {
          readAgain = true;
          return;
        }
        reading = true;
        try {
          do {
            readAgain = false;
            const before = events;
            try {
              const status = await api.recipientStatus(me);
              if (events === before && !readAgain && get().session?.ownerId === me) apply(status);
            } catch (error) {
              if (error instanceof ApiRequestError && error.status === 404) {
                set((s) => ({ agent: { ...EMPTY, isRecipient: false, error: s.agent.error } }));
              } else {
                set((s) => ({ agent: { ...s.agent, readError: `Cannot read your queue state: ${errorMessage(error)}` } }));
              }
            }
          } while (readAgain);
        } finally {
          reading = false;
        }
      },

      setAgentStatus(status, reason) {
        const api = callqOf(get());
        const me = get().session?.ownerId;
        if (api === null || me === undefined) return Promise.resolve(false);
        return request(status, () => (reason === undefined ? api.setRecipientStatus(me, status) : api.setRecipientStatus(me, status, undefined, reason)));
      },

      async setDisposition(code, note) {
        const api = callqOf(get());
        const me = get().session?.ownerId;
        const call = get().agent.status?.lastCall;
        if (api === null || me === undefined || call === undefined || call === null || get().agent.savingDisposition) return false;
        const before = events;
        set((s) => ({ agent: { ...s.agent, savingDisposition: true, dispositionError: null } }));
        try {
          const status = await api.setDisposition(me, { code, note, sessionId: call.sessionId });
          set((s) => ({ agent: { ...s.agent, savingDisposition: false } }));
          if (events === before) apply(status);
          else void get().loadAgentStatus();
          return true;
        } catch (error) {
          set((s) => ({ agent: { ...s.agent, savingDisposition: false, dispositionError: dispositionErrorText(error) } }));
          void get().loadAgentStatus();
          return false;
        }
      },

      setQueueAvailability(queueId, ready) {
        const api = callqOf(get());
        const me = get().session?.ownerId;
        if (api === null || me === undefined) return Promise.resolve(false);
        return request(`queue:${queueId}`, () => api.setRecipientStatus(me, ready ? "ready" : "away", queueId));
      },

      extendWrapup() {
        const api = callqOf(get());
        const me = get().session?.ownerId;
        if (api === null || me === undefined) return Promise.resolve(false);
        return request("wrapup_extend", () => api.wrapup(me, "wrapup_extend"));
      },

      async leaveQueues(choice) {
        const api = callqOf(get());
        const me = get().session?.ownerId;
        if (api === null || me === undefined) return false;
        try {
          apply(await api.setRecipientStatus(me, choice));
          return true;
        } catch {
          return false;
        }
      },

      cancelWrapup() {
        const api = callqOf(get());
        const me = get().session?.ownerId;
        if (api === null || me === undefined) return Promise.resolve(false);
        return request("wrapup_cancel", () => api.wrapup(me, "wrapup_cancel"));
      },
    };
  };
}

function dispositionErrorText(error: unknown): string {
  if (error instanceof ApiRequestError && error.kind !== "network") {
    const message = fieldMessage(error.data);
    if (message !== null) return `Could not save the disposition: ${message}.`;
  }
  return `Could not save the disposition: ${errorMessage(error)}`;
}

/** The first field error's own words (data.{field}.{rule}.message). */
function fieldMessage(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  for (const field of Object.values(data)) {
    if (typeof field !== "object" || field === null) continue;
    for (const rule of Object.values(field)) {
      const message = typeof rule === "object" && rule !== null ? (rule as Record<string, unknown>)["message"] : undefined;
      if (typeof message === "string") return message;
    }
  }
  return null;
}

const STATE_CHANGES: readonly AgentRequest[] = ["login", "logout", "ready", "away"] satisfies RecipientStatusChange[];

function isStateChange(kind: AgentRequest): kind is RecipientStatusChange {
  return STATE_CHANGES.includes(kind);
}
