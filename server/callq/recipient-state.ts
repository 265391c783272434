// The recipient (agent) state machine: every change of availability goes through step(), which
// checks the transition against the table and names the one event it emits.
//
//                 login            ready / wrapup_cancel / wrapup_done
//  Not-Logged-In -------> Away <-------------------------------+
//        ^                 |  ^ away                            |
//        | logout (any)    v  |                                 |
//        +------------  Ready ----offer----> Call-Offer ---answered---> On-A-Call
//                          ^                     |                          |
//                          +----missed (reject, timeout, unreachable:       | call_ended
//                                Ready, or Away when forced) / withdrawn     v
//                          +---------------------------------------- Wrapup-Time
//
// A recipient who asks for Away while ringing leaves the offer (Away at once); while on a call
// the request is kept (`pendingAway`) and applied when the call and its wrap-up are over.
//
// Two guards hold a recipient back from Ready: a required disposition not yet set for the queue
// call they handled (`dispositionMissing`: from wrap-up or Away), and a wrap-up whose queue allows
// no early exit while its time runs (`wrapupLocked`). A call that ends with a required
// disposition missing goes to wrap-up even when its queue has none.

// The one list of availability states and of the actions a recipient may ask for: the engine, the
// API's validation, the callflow module and the AsyncAPI enums all take them from here.
export const AVAILABILITY_STATES = ["Not-Logged-In", "Ready", "Away", "Call-Offer", "On-A-Call", "Wrapup-Time"] as const;
export type AvailabilityState = (typeof AVAILABILITY_STATES)[number];

/** The states a restart brings back: a call or a wrap-up in progress does not survive one. */
export type SavedAvailabilityState = Extract<AvailabilityState, "Ready" | "Away" | "Not-Logged-In">;

export const RECIPIENT_ACTIONS = ["login", "logout", "ready", "away", "login_ready", "state_toggle", "wrapup_extend", "wrapup_cancel"] as const;
export type RecipientAction = (typeof RECIPIENT_ACTIONS)[number];

/** The actions a phone may ask for (the wrap-up ones are the console's). */
export const PHONE_ACTIONS = ["login", "logout", "ready", "away", "login_ready", "state_toggle"] as const satisfies readonly RecipientAction[];
export type PhoneAction = (typeof PHONE_ACTIONS)[number];

export type RecipientTrigger =
  | "login"
  | "logout"
  | "ready"
  | "away"
  | "offer"
  | "answered"
  | "missed"
  | "withdrawn"
  | "call_ended"
  | "wrapup_done"
  | "wrapup_extend"
  | "wrapup_cancel";

/** The recipient event each step emits (`callq.recipient.<id>` names). */
export type RecipientEventName = "login" | "logout" | "ready" | "away" | "offer" | "delivered" | "reject" | "wrapup";

export interface StepContext {
  /** Away requested during a call, to apply once it is over. */
  pendingAway: boolean;
  /** After a missed offer: the queue forces Away (force_away_on_reject and the device refused). */
  forceAway?: boolean;
  /** Seconds of wrap-up after this call (call_ended). */
  wrapupSeconds?: number;
  /** call_ended: a wrap-up with no end of its own (the queue's policy `required`). */
  openWrapup?: boolean;
  /** The queue call last handled needs a disposition and has none: no Ready until it has. */
  dispositionMissing?: boolean;
  /** A wrap-up the queue allows no early exit from, while its time runs (`timeboxed_no_exit`). */
  wrapupLocked?: boolean;
}

export interface Step {
  from: AvailabilityState;
  to: AvailabilityState;
  event: RecipientEventName;
  /** Whether the pending Away request is used up by this step. */
  clearsPendingAway: boolean;
}

/** Why a transition the table knows was refused, beyond the state not taking it. */
export type HeldBack = "disposition_required" | "wrapup_locked";

export class IllegalRecipientTransition extends Error {
  constructor(
    readonly from: AvailabilityState,
    readonly trigger: RecipientTrigger,
    readonly heldBack?: HeldBack,
  ) {
    super(
      heldBack === "disposition_required"
        ? `the queue needs a disposition for the last call before Ready: give one first (${trigger} refused in ${from})`
        : heldBack === "wrapup_locked"
          ? `the queue's wrap-up allows no early exit: wait until its time is over (${trigger} refused)`
          : `a recipient in ${from} cannot ${trigger}`,
    );
    this.name = "IllegalRecipientTransition";
  }
}

/** Throws when a guard holds the recipient back from leaving for Ready (or leaving a locked wrap-up). */
function guard(from: AvailabilityState, trigger: RecipientTrigger, ctx: StepContext, toReady: boolean): void {
  if (from === "Wrapup-Time" && ctx.wrapupLocked) throw new IllegalRecipientTransition(from, trigger, "wrapup_locked");
  if (toReady && ctx.dispositionMissing) throw new IllegalRecipientTransition(from, trigger, "disposition_required");
}

/** Where the recipient goes when a call or its wrap-up is over. */
function afterWork(ctx: StepContext): { to: AvailabilityState; event: RecipientEventName; clearsPendingAway: boolean } {
  return ctx.pendingAway ? { to: "Away", event: "away", clearsPendingAway: true } : { to: "Ready", event: "ready", clearsPendingAway: false };
}

/**
 * The one place a transition is decided. Throws IllegalRecipientTransition for a trigger the
 * state does not take; callers turn that into an API error or ignore a late timer.
 */
export function step(from: AvailabilityState, trigger: RecipientTrigger, ctx: StepContext): Step {
  const to = (state: AvailabilityState, event: RecipientEventName, clearsPendingAway = false): Step => ({ from, to: state, event, clearsPendingAway });
  switch (trigger) {
    case "login":
      if (from === "Not-Logged-In") return to("Away", "login", true);
      break;
    case "logout":
      if (isLoggedIn(from)) return to("Not-Logged-In", "logout", true);
      break;
    case "ready":
      if (from === "Away" || from === "Wrapup-Time") {
        guard(from, trigger, ctx, true);
        return to("Ready", "ready", true);
      }
      break;
    case "away":
      if (from === "Ready" || from === "Wrapup-Time" || from === "Call-Offer") {
        guard(from, trigger, ctx, false);
        return to("Away", "away", true);
      }
      break;
    case "offer":
      if (from === "Ready") return to("Call-Offer", "offer");
      break;
    case "answered":
      if (from === "Call-Offer") return to("On-A-Call", "delivered");
      break;
    case "missed":
      if (from === "Call-Offer") return ctx.forceAway || ctx.pendingAway ? to("Away", "reject", true) : to("Ready", "reject");
      break;
    case "withdrawn":
      // The queue took the offer back (the caller left, the session timed out): no fault of theirs.
      if (from === "Call-Offer") return ctx.pendingAway ? to("Away", "away", true) : to("Ready", "ready");
      break;
    case "call_ended":
      if (from === "On-A-Call") {
        if ((ctx.wrapupSeconds ?? 0) > 0 || ctx.openWrapup || ctx.dispositionMissing) return to("Wrapup-Time", "wrapup");
        const next = afterWork(ctx);
        return to(next.to, next.event, next.clearsPendingAway);
      }
      break;
    case "wrapup_done":
      if (from === "Wrapup-Time") {
        const next = afterWork(ctx);
        if (next.to === "Ready") guard(from, trigger, { ...ctx, wrapupLocked: false }, true);
        return to(next.to, next.event, next.clearsPendingAway);
      }
      break;
    case "wrapup_extend":
      if (from === "Wrapup-Time") return to("Wrapup-Time", "wrapup");
      break;
    case "wrapup_cancel":
      if (from === "Wrapup-Time") {
        guard(from, trigger, ctx, true);
        return to("Ready", "ready", true);
      }
      break;
  }
  throw new IllegalRecipientTransition(from, trigger);
}

export function isLoggedIn(state: AvailabilityState): boolean {
  return state !== "Not-Logged-In";
}
