// The phone slice: the user's devices and the one the console registers as, its registration
// state, and the calls on it with everything the agent does to them (accept, reject, hang up,
// mute, hold, keypad, blind and attended transfer, dial, and with several lines: swap, merge).
// One line is in progress at a time: accepting, dialling or resuming a line first holds the
// line in progress. The line itself (sip.js) comes in as a PhoneFactory, the ring tone and
// desktop notification as CallAlerts, so tests can fake both.
import type { StateCreator } from "zustand/vanilla";
import { errorMessage } from "../api/error-text.js";
import type { PlatformEvent } from "../api/events.js";
import type { DeviceSummary, DirectoryEntry, TransferType } from "../api/platform.js";
import { callsGoneFromServer, remotePartyUpdate } from "./call-reconcile.js";
import type { CallAlerts, CallInfo, PhoneFactory, PhoneLine, RegistrationState } from "../phone/phone-line.js";
import type { Clock } from "../clock.js";
import { queueTimeAt } from "./queue-time.js";
import type { AppState } from "./store.js";
import { readStored, writeStored, type KeyValueStorage } from "./storage.js";

/** Digits that take an attended transfer back during the consultation (the channel's takeback_dtmf). */
export const TAKEBACK_DTMF = "*0";

export interface TransferState {
  type: TransferType;
  target: string;
  /** `requesting`: the API call is on its way; `consulting`: attended, the target is rung or talking to us. */
  stage: "requesting" | "consulting";
}

/** Someone on a call besides the agent, as the call card names them. */
export interface CallParty {
  name: string;
  number: string;
}

export interface CallView extends CallInfo {
  /** Clock ms the call was offered or dialled. */
  startedAt: number;
  /** Clock ms it was answered; null before. */
  answeredAt: number | null;
  /** The digits sent on the keypad so far. */
  digits: string;
  /** An action under way ("answering", "holding" ...), so buttons do not fire twice. */
  pending: string | null;
  /** Why the last action on this call failed; null when it did not. */
  error: string | null;
  transfer: TransferState | null;
  /** The parties of other lines merged into this one (a three-way conference); empty otherwise. */
  merged: CallParty[];
  /** A queue offer the console answers by itself (auto-answer): clock ms it will; null otherwise. */
  autoAnswerAt: number | null;
  /**
   * The account's queue time (ms, queue-time.ts) when the call was offered: a queue offer's wait
   * goes on from its header's figure by the queue time passed since, which a paused training run holds.
   */
  startedAtQueueTime: number;
}

/**
 * `starting`: signed in, the line not started yet (it starts once the sign-in's profile read has
 * answered; on a slow link that is seconds); `none`: there is no line to start (no device, no phone
 * in this console); `loading`: reading the devices and credentials.
 */
export type PhoneStatus = RegistrationState | "none" | "loading" | "starting";

export interface PhoneState {
  devices: DeviceSummary[];
  deviceId: string | null;
  /** `none`: no line (signed out, or the user has no device); `loading`: reading devices and credentials. */
  status: PhoneStatus;
  retryAt: number | null;
  /** Why there is no registration (no device, refused credentials, server out of reach). */
  error: string | null;
  calls: CallView[];
  /** The account's users with extensions, for transfers; read when a transfer is first opened. */
  directory: DirectoryEntry[];
}

export interface PhoneSlice {
  phone: PhoneState;
  startPhone(): Promise<void>;
  chooseDevice(deviceId: string): Promise<void>;
  stopPhone(): Promise<void>;
  retryRegistration(): void;
  /** Places a call; resolves null once it is placed, else why it was not, in words (nothing is placed without a line). */
  dial(target: string): Promise<string | null>;
  acceptCall(id: string): Promise<void>;
  rejectCall(id: string): Promise<void>;
  hangupCall(id: string): Promise<void>;
  toggleMute(id: string): void;
  /** Holds the line in progress, or resumes a held one (holding the line in progress first). */
  toggleHold(id: string): Promise<void>;
  /** The line in progress goes on hold and the held one resumes (see swapPair). */
  swapCalls(): Promise<void>;
  /** Merges two lines into one three-way conference on the server (see mergePair). */
  mergeCalls(): Promise<void>;
  sendDigits(id: string, digits: string): void;
  loadDirectory(): Promise<void>;
  transferCall(id: string, target: string, type: TransferType): Promise<void>;
  /** Attended: leaves the consultation, joining the caller and the target. */
  completeTransfer(id: string): Promise<void>;
  /** Attended: gives the consultation up and returns to the caller. */
  cancelTransfer(id: string): void;
}

export interface PhoneDeps {
  storage: KeyValueStorage;
  clock: Clock;
  phone?: PhoneFactory;
  alerts?: CallAlerts;
}

const NO_PHONE: PhoneState = { devices: [], deviceId: null, status: "starting", retryAt: null, error: null, calls: [], directory: [] };
const deviceKey = (accountId: string, ownerId: string) => `switchboard.device.${accountId}.${ownerId}`;

/** Why there is no phone line to call on, in words (after "Cannot call 1003: "). */
export function noLineWords(phone: Pick<PhoneState, "status" | "error">): string {
  if (phone.status === "loading" || phone.status === "starting") return "your phone is still connecting. Try again in a moment.";
  return phone.error === null ? "there is no phone line." : `there is no phone line. ${phone.error}`;
}

/** The call keyboard shortcuts and single-call buttons act on: the one ringing, else the one in progress. */
export function focusedCall(calls: readonly CallView[], kind: "offer" | "current"): CallView | undefined {
  if (kind === "offer") return calls.find((c) => c.state === "incoming");
  return calls.find((c) => c.state === "active") ?? calls.find((c) => c.state === "held") ?? calls.find((c) => c.state === "dialing" || c.state === "ringing");
}

/** What Swap acts on: the held line to resume, and the line in progress to hold first, if any. */
export function swapPair(calls: readonly CallView[]): { from: CallView | undefined; to: CallView } | undefined {
  const to = calls.find((c) => c.state === "held");
  return to === undefined ? undefined : { from: calls.find((c) => c.state === "active"), to };
}

/**
 * What Merge acts on: two connected lines, the one in progress first. The line kept (whose
 * channel the server merges into; the other line's leg is hung up) is a conference already if one
 * of them is, else a queue's call (the queue counts the agent busy until that leg leaves), else
 * the line in progress.
 */
export function mergePair(calls: readonly CallView[]): { line: CallView; other: CallView } | undefined {
  const connected = [...calls.filter((c) => c.state === "active"), ...calls.filter((c) => c.state === "held")];
  const [first, second] = connected;
  if (first === undefined || second === undefined) return undefined;
  const weight = (call: CallView) => (call.merged.length > 0 ? 2 : call.offer.queueId !== undefined ? 1 : 0);
  return weight(second) > weight(first) ? { line: second, other: first } : { line: first, other: second };
}

export function createPhoneSlice(deps: PhoneDeps): StateCreator<AppState, [], [], PhoneSlice> {
  let line: PhoneLine | null = null;
  let unlisten: (() => void)[] = [];
  /** Bumped by every start and stop, so a slow start that was overtaken gives up. */
  let generation = 0;
  /** Lines merged into another, off the list before their leg's end is reported. */
  const mergedAway = new Set<string>();

  return (set, get) => {
    const patchPhone = (patch: Partial<PhoneState>) => set((state) => ({ phone: { ...state.phone, ...patch } }));
    const patchCall = (id: string, patch: Partial<CallView>) =>
      set((state) => ({ phone: { ...state.phone, calls: state.phone.calls.map((c) => (c.id === id ? { ...c, ...patch } : c)) } }));
    const callOf = (id: string) => get().phone.calls.find((c) => c.id === id);

    /** Runs an action on a call, showing it as pending and its failure on the call; true when it succeeded. */
    async function act(id: string, pending: string, action: (line: PhoneLine, call: CallView) => Promise<void>): Promise<boolean> {
      const call = callOf(id);
      if (line === null || call === undefined || call.pending !== null) return false;
      patchCall(id, { pending, error: null });
      try {
        await action(line, call);
        patchCall(id, { pending: null });
        return true;
      } catch (error) {
        patchCall(id, { pending: null, error: `${capitalize(pending)} failed: ${errorMessage(error)}` });
        return false;
      }
    }

    /**
     * Puts every line in progress but `except` on hold (real SIP hold: the party hears music),
     * before another line takes the agent's audio. Throws when one cannot be held, so the agent
     * never talks on two lines at once.
     */
    async function holdOthers(phone: PhoneLine, except: string | null): Promise<void> {
      for (const other of get().phone.calls) {
        if (other.id === except || other.state !== "active") continue;
        patchCall(other.id, { pending: "holding", error: null });
        try {
          await phone.hold(other.id, true);
          patchCall(other.id, { pending: null });
        } catch (error) {
          patchCall(other.id, { pending: null, error: `Holding failed: ${errorMessage(error)}` });
          throw new Error(`the call with ${partyOf(other).name} could not be held`);
        }
      }
    }

    function onCall(info: CallInfo): void {
      const now = deps.clock.now();
      const calls = get().phone.calls;
      const known = calls.find((c) => c.id === info.id);
      if (mergedAway.has(info.id)) {
        if (info.state !== "ended") return;
        mergedAway.delete(info.id);
        get().refreshRecentCallsSoon();
        return;
      }
      let next: CallView[];
      if (info.state === "ended") {
        next = calls.filter((c) => c.id !== info.id);
        deps.alerts?.dismiss(info.id);
        get().noteCallEnded(info);
        get().refreshRecentCallsSoon();
      } else if (known === undefined) {
        const autoAnswerAt = info.state === "incoming" ? autoAnswerTime(info, now) : null;
        const startedAtQueueTime = queueTimeAt(get().queues.queueTime, now);
        next = [...calls, { ...info, startedAt: now, answeredAt: null, digits: "", pending: null, error: null, transfer: null, merged: [], autoAnswerAt, startedAtQueueTime }];
        if (info.state === "incoming") deps.alerts?.notify(info);
        if (autoAnswerAt !== null) deps.clock.after(autoAnswerAt - now, () => autoAnswer(info.id));
      } else {
        const answered = known.answeredAt ?? (info.state === "active" || info.state === "held" ? now : null);
        next = calls.map((c) => (c.id === info.id ? { ...c, ...info, answeredAt: answered } : c));
        if (info.state !== "incoming") deps.alerts?.dismiss(info.id);
      }
      patchPhone({ calls: next });
      if (next.some((c) => c.state === "incoming")) deps.alerts?.ring(audioChoices(get()).ringerId || undefined);
      else deps.alerts?.stopRing();
    }

    /**
     * When a queue offer is answered by itself: the agent's auto-answer delay after it rings.
     * Direct calls always wait for the agent.
     */
    function autoAnswerTime(info: CallInfo, now: number): number | null {
      const auto = get().directory.preferences?.autoAnswer;
      if (info.offer.queueId === undefined || auto === undefined || !auto.enabled) return null;
      return now + Math.max(0, auto.delayS) * 1000;
    }

    /** The delay is over: a tone, then the answer, unless the agent rejected or answered meanwhile. */
    function autoAnswer(id: string): void {
      const call = callOf(id);
      if (call === undefined || call.state !== "incoming" || call.pending !== null || call.autoAnswerAt === null) return;
      deps.alerts?.stopRing();
      deps.alerts?.tone();
      void get().acceptCall(id);
    }

    async function register(deviceId: string, mine: number): Promise<void> {
      const api = get().platformApi();
      const session = get().session;
      if (api === null || session === null || deps.phone === undefined) return;
      patchPhone({ deviceId, status: "loading", error: null, retryAt: null });
      let credentials;
      try {
        credentials = await api.sipCredentials(deviceId);
      } catch (error) {
        if (mine === generation) patchPhone({ status: "failed", error: `Cannot read the device's SIP credentials: ${errorMessage(error)}` });
        return;
      }
      if (mine !== generation) return;
      const profile = get().profile;
      const choices = audioChoices(get());
      let next: PhoneLine;
      try {
        next = await deps.phone({
          server: get().endpoints.sip,
          ...credentials,
          displayName: profile ? `${profile.firstName} ${profile.lastName}`.trim() || profile.username : session.username,
          speakerId: choices.speakerId || undefined,
          microphoneId: choices.microphoneId || undefined,
        });
      } catch (error) {
        if (mine === generation) patchPhone({ status: "failed", error: `Cannot start the phone: ${errorMessage(error)}` });
        return;
      }
      // Signed out or another device chosen while the phone's code loaded: this line is not wanted.
      if (mine !== generation) {
        await next.stop().catch(() => undefined);
        return;
      }
      line = next;
      const showRegistration = (status: RegistrationState) => {
        if (line !== next) return;
        patchPhone({ status, retryAt: next.retryAt, error: status === "registered" ? null : next.lastError });
        if (status === "registered") void endCallsGoneFromServer();
      };
      const followParty = (event: PlatformEvent) => {
        const update = remotePartyUpdate(event, get().phone.calls);
        if (update !== null) patchCall(update.id, { remoteName: update.remoteName, remoteUser: update.remoteUser });
      };
      unlisten = [next.onRegistration(showRegistration), next.onCall(onCall), get().onPlatformEvent(followParty)];
      await next.register().catch(() => undefined);
      showRegistration(next.registration);
    }

    /** After a reconnect: calls the server no longer has end here too (call-reconcile.ts). */
    async function endCallsGoneFromServer(): Promise<void> {
      const api = get().platformApi();
      const session = get().session;
      if (api === null || session === null) return;
      const gone = await callsGoneFromServer(api, session.ownerId, get().phone.calls).catch(() => []);
      for (const call of gone) {
        if (callOf(call.id) === undefined) continue;
        void line?.hangup(call.id).catch(() => undefined);
        onCall({ ...call, state: "ended" });
      }
    }

    async function dropLine(): Promise<void> {
      for (const stop of unlisten) stop();
      unlisten = [];
      const old = line;
      line = null;
      deps.alerts?.stopRing();
      for (const call of get().phone.calls) deps.alerts?.dismiss(call.id);
      await old?.stop().catch(() => undefined);
    }

    return {
      phone: NO_PHONE,

      async startPhone() {
        const session = get().session;
        const api = get().platformApi();
        if (session === null || api === null) return;
        const mine = ++generation;
        if (deps.phone === undefined) {
          patchPhone({ status: "none", error: "This console has no phone available." });
          return;
        }
        patchPhone({ status: "loading", error: null });
        let devices: DeviceSummary[];
        try {
          devices = (await api.devicesOf(session.ownerId)).filter((d) => d.enabled);
        } catch (error) {
          if (mine === generation) patchPhone({ status: "failed", error: `Cannot read your devices: ${errorMessage(error)}` });
          return;
        }
        if (mine !== generation) return;
        const remembered = readStored(deps.storage, deviceKey(session.accountId, session.ownerId));
        const chosen = devices.find((d) => d.id === remembered) ?? devices.find((d) => d.deviceType === "softphone") ?? devices[0];
        patchPhone({ devices });
        if (chosen === undefined) {
          patchPhone({ status: "none", error: "You have no enabled device to take calls on. Ask an administrator to add a softphone for you." });
          return;
        }
        await register(chosen.id, mine);
      },

      async chooseDevice(deviceId) {
        const session = get().session;
        if (session === null || deviceId === get().phone.deviceId) return;
        const mine = ++generation;
        writeStored(deps.storage, deviceKey(session.accountId, session.ownerId), deviceId);
        await dropLine();
        patchPhone({ calls: [] });
        if (mine === generation) await register(deviceId, mine);
      },

      async stopPhone() {
        generation++;
        await dropLine();
        set({ phone: NO_PHONE });
      },

      retryRegistration() {
        line?.retryNow();
      },

      async dial(target) {
        const number = target.trim();
        if (number === "") return "There is no number to call.";
        // No line (yet): say why rather than place nothing without a word (a callback's "Call
        // now" took its reminder down all the same).
        if (line === null) return `Cannot call ${number}: ${noLineWords(get().phone)}`;
        try {
          await holdOthers(line, null);
          await line.call(number);
          return null;
        } catch (error) {
          const words = `Cannot call ${number}: ${errorMessage(error)}`;
          patchPhone({ error: words });
          return words;
        }
      },

      async acceptCall(id) {
        await act(id, "answering", async (l) => {
          await holdOthers(l, id);
          await l.answer(id);
        });
      },

      async rejectCall(id) {
        await act(id, "rejecting", (l) => l.reject(id));
      },

      async hangupCall(id) {
        await act(id, "hanging up", (l) => l.hangup(id));
      },

      toggleMute(id) {
        const call = callOf(id);
        if (line === null || call === undefined) return;
        try {
          line.setMuted(id, !call.muted);
        } catch (error) {
          patchCall(id, { error: `Mute failed: ${errorMessage(error)}` });
        }
      },

      async toggleHold(id) {
        await act(id, "holding", async (l, call) => {
          const resuming = call.state === "held";
          if (resuming) await holdOthers(l, id);
          await l.hold(id, !resuming);
        });
      },

      async swapCalls() {
        const pair = swapPair(get().phone.calls);
        if (pair !== undefined) await get().toggleHold(pair.to.id);
      },

      async mergeCalls() {
        const api = get().platformApi();
        const pair = mergePair(get().phone.calls);
        if (api === null || pair === undefined) return;
        const { line: kept, other } = pair;
        const merged = await act(kept.id, "merging", () => api.merge(kept.callId, other.callId));
        if (!merged) return;
        // The server hangs up the other line's leg (its BYE follows); its party now talks on this one.
        mergedAway.add(other.id);
        set((state) => ({
          phone: {
            ...state.phone,
            calls: state.phone.calls.filter((c) => c.id !== other.id).map((c) => (c.id === kept.id ? { ...c, merged: [...c.merged, partyOf(other), ...other.merged] } : c)),
          },
        }));
        if (callOf(kept.id)?.state === "held" && !get().phone.calls.some((c) => c.state === "active")) await get().toggleHold(kept.id);
      },

      sendDigits(id, digits) {
        const call = callOf(id);
        if (line === null || call === undefined) return;
        if (line.sendDtmf(id, digits)) patchCall(id, { digits: (call.digits + digits).slice(-32), error: null });
        else patchCall(id, { error: "The keypad needs a call in progress." });
      },

      async loadDirectory() {
        const api = get().platformApi();
        if (api === null) return;
        try {
          patchPhone({ directory: await api.directory() });
        } catch {
          // The directory only helps pick a target; typing the extension still works.
        }
      },

      async transferCall(id, target, type) {
        const api = get().platformApi();
        const call = callOf(id);
        const to = target.trim();
        if (api === null || call === undefined || to === "" || call.pending !== null) return;
        patchCall(id, { pending: "transferring", error: null, transfer: { type, target: to, stage: "requesting" } });
        try {
          await api.transfer(call.callId, { target: to, type, ...(type === "attended" ? { takebackDtmf: TAKEBACK_DTMF } : {}) });
          // Blind: the server hangs up this leg and the call leaves the list by itself.
          patchCall(id, { pending: null, transfer: type === "attended" ? { type, target: to, stage: "consulting" } : null });
        } catch (error) {
          patchCall(id, { pending: null, transfer: null, error: `Transfer to ${to} failed: ${errorMessage(error)}` });
        }
      },

      async completeTransfer(id) {
        await act(id, "completing the transfer", (l) => l.hangup(id));
      },

      cancelTransfer(id) {
        const call = callOf(id);
        if (line === null || call?.transfer?.stage !== "consulting") return;
        if (line.sendDtmf(id, TAKEBACK_DTMF)) patchCall(id, { transfer: null, error: null });
        else patchCall(id, { error: "Cannot return to the caller: the call has no audio path for the keypad." });
      },
    };
  };
}

/** The microphone, speaker and ringer the agent chose in the audio settings ("" = the system default). */
export function audioChoices(state: AppState): { microphoneId: string; speakerId: string; ringerId: string } {
  const { microphoneId, speakerId, ringerId } = state.audio;
  return { microphoneId, speakerId, ringerId };
}

/** Who is at the other end of a line, as the call card shows them. */
export function partyOf(call: CallInfo): CallParty {
  const number = call.remoteUser;
  const name = call.remoteName && call.remoteName !== number ? call.remoteName : "";
  return { name: name || number || "Unknown caller", number: name ? number : "" };
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
