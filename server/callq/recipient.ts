// One recipient (agent) of an account: availability, the call offered or handled, wrap-up,
// per-queue availability and stats. Every change of availability goes through apply().
import { fromGregorianSeconds, toGregorianSeconds } from "../clock.js";
import type { DispositionCode, WrapupPolicy } from "./queue-config.js";
import { RecipientDays } from "./recipient-day.js";
import { isLoggedIn, step, type AvailabilityState, type SavedAvailabilityState, type RecipientEventName, type RecipientTrigger, type Step, type StepContext } from "./recipient-state.js";

/** A call as the recipient status shows it (offered_call, handling_call). */
export interface CallInfo {
  queue_id: string;
  queue_name: string;
  session_id: string;
  call_id: string;
  caller_id_name: string;
  caller_id_number: string;
  /** Gregorian seconds. */
  queue_enter_time: number;
  /** Set when the call is a callback (local addition): the number the server dials. */
  callback_number?: string;
}

export interface RecipientStats {
  total_calls: number;
  missed_calls: number;
  /** Seconds on handled calls, for avg_call_time. */
  total_call_time: number;
  /** Offers made to the recipient (route_least_offers). */
  offers: number;
  /** Unix seconds of the current login (0 when logged out). */
  login_time: number;
  /** Gregorian seconds of the last state change. */
  last_action_time: number;
  /** Gregorian seconds of the last call delivered (0 when none). */
  last_handled_time: number;
}

/**
 * Why the recipient is Away: one of the account's reasons they chose, or the engine's own
 * (`missed_offers`); unset when they gave none.
 */
export type AwayReason = string;

/** The reasons the engine sets itself; a recipient cannot choose them. */
export const ENGINE_AWAY_REASONS = ["missed_offers"] as const;

/** How a queue call ended, as the recipient who handled it said: a code of the queue and a note. */
export interface Disposition {
  code: string;
  label: string;
  note: string;
  /** Gregorian seconds when it was set. */
  set_at: number;
}

/** The queue call a recipient handles or handled last, with what its queue asks of its disposition. */
export interface HandledCall {
  info: CallInfo;
  /** The queue's codes when the call was delivered. */
  codes: DispositionCode[];
  required: boolean;
  policy: WrapupPolicy;
  disposition: Disposition | undefined;
}

/** Why a recipient who is Ready receives no offer. */
export type UnavailableReason = "no_device";

/** What survives a restart (callq_recipient_states documents). */
export interface SavedRecipient {
  state: SavedAvailabilityState;
  pending_away: boolean;
  away_reason?: AwayReason;
  /** Gregorian seconds since when the recipient is Away (with or without a reason). */
  away_since?: number;
  /** The reason of a pending Away. */
  pending_away_reason?: AwayReason;
  /** With away_reason missed_offers: how many in a row. */
  missed_offers?: number;
  queue_availability: Record<string, boolean>;
  stats: RecipientStats;
}

export interface RecipientChange {
  step: Step;
  recipient: Recipient;
  /** Extra event data (a reason, a queue id). */
  detail?: Record<string, unknown>;
}

export class Recipient {
  readonly accountId: string;
  readonly id: string;
  #state: AvailabilityState = "Not-Logged-In";
  pendingAway = false;
  readonly queueAvailability = new Map<string, boolean>();
  offered: CallInfo | undefined;
  handling: CallInfo | undefined;
  /** The offer in progress (aborting it withdraws the offer). */
  offer: AbortController | undefined;
  /** Unix ms when wrap-up ends; its timer's cancel. */
  wrapupEndsAt = 0;
  cancelWrapup: (() => void) | undefined;
  /** Unix ms before which dispatch skips the recipient (no device could be rung). */
  unreachableUntil = 0;
  /** Unix ms of the last change of state, for the console's timer. */
  changedAt = 0;
  /** Offers missed (rejected, not answered) since the last one answered. */
  missedInARow = 0;
  /** Why the recipient is Away (chosen, or forced by the engine); cleared when they leave Away. */
  awayReason: AwayReason | undefined;
  /** Unix ms since when the recipient is Away, or Away for this reason (0 when not Away). */
  awaySince = 0;
  /** The reason given with an Away request kept for after the call. */
  pendingAwayReason: AwayReason | undefined;
  /** The queue call handled now or last (until the next one is delivered), for its disposition. */
  lastCall: HandledCall | undefined;
  /** The wrap-up has no time left (or had none) and waits only for the required disposition. */
  heldForDisposition = false;
  /** The current wrap-up allows no early exit while its time runs (`timeboxed_no_exit`). */
  wrapupNoExit = false;
  /** With `awayReason` missed_offers: how many offers in a row were missed. */
  missedAwayAfter = 0;
  /** Every queue device of the recipient has been unregistered for the grace period. */
  noDevice = false;
  /** The grace timer's cancel, while the recipient has no device but the grace has not run out. */
  cancelDeviceGrace: (() => void) | undefined;
  readonly stats: RecipientStats = {
    total_calls: 0,
    missed_calls: 0,
    total_call_time: 0,
    offers: 0,
    login_time: 0,
    last_action_time: 0,
    last_handled_time: 0,
  };

  /** The figures of the recipient's days (today's and yesterday's in memory). */
  readonly days: RecipientDays;

  constructor(accountId: string, id: string) {
    this.accountId = accountId;
    this.id = id;
    this.days = new RecipientDays(id);
  }

  get state(): AvailabilityState {
    return this.#state;
  }

  get loggedIn(): boolean {
    return isLoggedIn(this.#state);
  }

  /** Ready and reachable: what `available` says in statuses and events. */
  get available(): boolean {
    return this.#state === "Ready" && !this.noDevice;
  }

  get unavailableReason(): UnavailableReason | undefined {
    return this.noDevice && this.loggedIn ? "no_device" : undefined;
  }

  /** A required disposition is not yet set for the last queue call handled. */
  get dispositionMissing(): boolean {
    return this.lastCall !== undefined && this.lastCall.required && this.lastCall.disposition === undefined;
  }

  /** In a wrap-up that may not be left yet. */
  wrapupLocked(now: number): boolean {
    return this.#state === "Wrapup-Time" && this.wrapupNoExit && this.wrapupEndsAt > now;
  }

  /** Ready for a call of `queueId` (per-queue availability unset counts as available). */
  availableFor(queueId: string, now: number): boolean {
    return this.available && this.queueAvailability.get(queueId) !== false && now >= this.unreachableUntil;
  }

  /** The one way the state changes: checked by the table, stamped, and returned for its event. */
  apply(trigger: RecipientTrigger, ctx: Omit<StepContext, "pendingAway">, now: number): Step {
    const taken = step(this.#state, trigger, {
      dispositionMissing: this.dispositionMissing,
      wrapupLocked: this.wrapupLocked(now),
      ...ctx,
      pendingAway: this.pendingAway,
    });
    this.#state = taken.to;
    if (taken.to === "Away" && taken.from !== "Away") {
      this.awaySince = now;
      // Away as asked during the call: with the reason asked for.
      this.awayReason = this.pendingAway ? this.pendingAwayReason : undefined;
    }
    if (taken.clearsPendingAway) {
      this.pendingAway = false;
      this.pendingAwayReason = undefined;
    }
    if (taken.to !== "Away") {
      this.awayReason = undefined;
      this.awaySince = 0;
      this.missedAwayAfter = 0;
    }
    this.changedAt = now;
    this.stats.last_action_time = toGregorianSeconds(now);
    if (taken.event === "login") this.stats.login_time = Math.floor(now / 1000);
    if (taken.to === "Not-Logged-In") {
      this.stats.login_time = 0;
      this.offered = undefined;
    }
    if (taken.from === "Call-Offer") this.offered = undefined;
    if (taken.from === "On-A-Call") this.handling = undefined;
    if (taken.from === "Wrapup-Time" && taken.to !== "Wrapup-Time") {
      this.cancelWrapup?.();
      this.cancelWrapup = undefined;
      this.wrapupEndsAt = 0;
      this.heldForDisposition = false;
      this.wrapupNoExit = false;
    }
    return taken;
  }

  saved(): SavedRecipient {
    const state = !this.loggedIn ? "Not-Logged-In" : this.#state === "Away" ? "Away" : "Ready";
    return {
      state,
      pending_away: this.pendingAway,
      ...(this.pendingAway && this.pendingAwayReason !== undefined ? { pending_away_reason: this.pendingAwayReason } : {}),
      ...(state === "Away" && this.awaySince > 0 ? { away_since: toGregorianSeconds(this.awaySince) } : {}),
      ...(state === "Away" && this.awayReason !== undefined ? { away_reason: this.awayReason, missed_offers: this.missedAwayAfter } : {}),
      queue_availability: Object.fromEntries(this.queueAvailability),
      stats: { ...this.stats },
    };
  }

  /**
   * Back from a saved state after a restart: a call or an offer did not survive it, so a
   * recipient who was busy comes back Ready (or Away if they asked for it).
   */
  restore(saved: SavedRecipient, now: number): void {
    Object.assign(this.stats, saved.stats);
    this.pendingAway = false;
    for (const [queue, on] of Object.entries(saved.queue_availability)) this.queueAvailability.set(queue, on);
    const wantsAway = saved.state === "Ready" && saved.pending_away;
    const wanted = wantsAway ? "Away" : saved.state;
    this.#state = wanted;
    this.awayReason = wanted !== "Away" ? undefined : wantsAway ? saved.pending_away_reason : saved.away_reason;
    this.awaySince = wanted !== "Away" ? 0 : !wantsAway && saved.away_since !== undefined ? fromGregorianSeconds(saved.away_since) : now;
    this.missedAwayAfter = this.awayReason === "missed_offers" ? (saved.missed_offers ?? 0) : 0;
    this.changedAt = now;
  }
}

export type { AvailabilityState, RecipientEventName };
