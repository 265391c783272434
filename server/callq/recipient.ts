// One recipient (agent) of an account: availability, the call offered or handled, wrap-up,
// per-queue availability and stats. Every change of availability goes through apply().
import { toGregorianSeconds } from "../clock.js";
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

/** Why the engine itself set the recipient Away (unset when they chose Away). */
export type AwayReason = "missed_offers";

/** Why a recipient who is Ready receives no offer. */
export type UnavailableReason = "no_device";

/** What survives a restart (callq_recipient_states documents). */
export interface SavedRecipient {
  state: SavedAvailabilityState;
  pending_away: boolean;
  away_reason?: AwayReason;
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
  /** Set with the Away the engine forced; cleared when the recipient leaves Away. */
  awayReason: AwayReason | undefined;
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

  constructor(accountId: string, id: string) {
    this.accountId = accountId;
    this.id = id;
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

  /** Ready for a call of `queueId` (per-queue availability unset counts as available). */
  availableFor(queueId: string, now: number): boolean {
    return this.available && this.queueAvailability.get(queueId) !== false && now >= this.unreachableUntil;
  }

  /** The one way the state changes: checked by the table, stamped, and returned for its event. */
  apply(trigger: RecipientTrigger, ctx: Omit<StepContext, "pendingAway">, now: number): Step {
    const taken = step(this.#state, trigger, { ...ctx, pendingAway: this.pendingAway });
    this.#state = taken.to;
    if (taken.clearsPendingAway) this.pendingAway = false;
    if (taken.to !== "Away") {
      this.awayReason = undefined;
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
    }
    return taken;
  }

  saved(): SavedRecipient {
    const state = !this.loggedIn ? "Not-Logged-In" : this.#state === "Away" ? "Away" : "Ready";
    return {
      state,
      pending_away: this.pendingAway,
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
    const wanted = saved.state === "Ready" && saved.pending_away ? "Away" : saved.state;
    this.#state = wanted;
    this.awayReason = wanted === "Away" ? saved.away_reason : undefined;
    this.missedAwayAfter = this.awayReason === undefined ? 0 : (saved.missed_offers ?? 0);
    this.changedAt = now;
  }
}

export type { AvailabilityState, RecipientEventName };
