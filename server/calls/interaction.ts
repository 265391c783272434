// One customer interaction: every leg that carries the same call forward (the caller, the agent
// who answers, the colleague a transfer hands it to) shares one `interaction_id`, as the hosted
// service's CDRs do, so the recordings and CDRs of one conversation can be found together.
//
// The id lives in the legs' custom channel variables. Two legs share it as soon as they are
// bridged (the first that has one gives it to the other, else a new one is made); a loopback's
// legs take it from the leg they are opened for, so it crosses attended transfers; a blind
// transfer keeps the moved leg itself, and with it the id.
import { toGregorianSeconds, type RandomSource } from "../clock.js";
import type { Channel } from "./channel.js";

export const INTERACTION_VAR = "interaction_id";

export function interactionOf(channel: Channel): string | undefined {
  return channel.customVars.get(INTERACTION_VAR);
}

/** The hosted service's shape: the start in Gregorian seconds, a dash, 8 hex digits. */
export function newInteractionId(nowMs: number, random: RandomSource): string {
  return `${toGregorianSeconds(nowMs)}-${random.bytes(4).toString("hex")}`;
}

/** Puts two bridged legs in one interaction: the one `a` is in, else `b`'s, else a new one. */
export function shareInteraction(a: Channel, b: Channel, fresh: () => string): void {
  const id = interactionOf(a) ?? interactionOf(b) ?? fresh();
  a.customVars.set(INTERACTION_VAR, id);
  b.customVars.set(INTERACTION_VAR, id);
}

/** A leg opened on behalf of `origin` (a loopback's) joins its interaction. */
export function inheritInteraction(leg: Channel, origin: Channel): void {
  const id = interactionOf(origin);
  if (id !== undefined) leg.customVars.set(INTERACTION_VAR, id);
}
