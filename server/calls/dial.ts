// Ringing devices for a call: an outbound leg with the server's offer to every registered target at
// once; the first answer wins, the rest are cancelled; else the code the caller should get.
import type { Clock } from "../clock.js";
import { memoryMediaPair, type CallMedia, type WebRtcLeg } from "../media/index.js";
import type { StoredDoc } from "../store/index.js";
import type { Channel, ChannelChange, ChannelParty } from "./channel.js";
import type { CallContext } from "./context.js";
import { bestFailure, causeOfSipCode, type HangupCause } from "./hangup-cause.js";
import { deviceParty, ownerIdOf, presenceIdOf, sipUsernameOf } from "./identity.js";

export interface DialTarget {
  device: StoredDoc;
  owner?: StoredDoc;
}

export interface DialRequest {
  accountId: string;
  realm: string;
  targets: readonly DialTarget[];
  /** Shown on the rung devices. */
  caller: ChannelParty;
  timeoutMs: number;
  /** The clock the no-answer timeout waits on: the call engine's unless given (a queue's own time). */
  clock?: Pick<Clock, "after">;
  /** Aborting cancels every leg still ringing. */
  signal: AbortSignal;
  /** The channel the legs ring for: it hears of the first ringing (180) and is their origin. */
  origin?: Channel;
  /** Extra SIP headers on every INVITE (a queue offer's queue name, session and wait). */
  headers?: [string, string][];
}

export type DialResult =
  | { kind: "answered"; channel: Channel }
  | { kind: "failed"; code: number; cause: HangupCause }
  | { kind: "aborted" };

export async function dial(ctx: CallContext, request: DialRequest): Promise<DialResult> {
  if (request.signal.aborted) return { kind: "aborted" };
  const started = await Promise.all(request.targets.map((target) => startLeg(ctx, request, target)));
  const legs = started.filter((leg) => leg !== undefined);
  if (request.signal.aborted) {
    for (const leg of legs) leg.hangup("ORIGINATOR_CANCEL");
    return { kind: "aborted" };
  }
  // Nobody to ring: every target is unregistered (the hosted service's SUBSCRIBER_ABSENT).
  if (legs.length === 0) return { kind: "failed", code: 480, cause: "SUBSCRIBER_ABSENT" };
  return race(ctx, request, legs);
}

/** Waits for the first answer among `legs`, or the end of them all. */
function race(ctx: CallContext, request: Pick<DialRequest, "timeoutMs" | "clock" | "signal" | "origin">, legs: readonly Channel[]): Promise<DialResult> {
  return new Promise((resolve) => {
    const pending = new Set(legs);
    const codes: number[] = [];
    const unlisten: (() => void)[] = [];
    let settled = false;

    const settle = (result: DialResult): void => {
      if (settled) return;
      settled = true;
      cancelNoAnswer();
      request.signal.removeEventListener("abort", onAbort);
      for (const off of unlisten) off();
      resolve(result);
    };
    const endAll = (cause: HangupCause): void => {
      for (const leg of [...pending]) leg.hangup(cause);
    };
    // Settled first, so the legs ended here are not counted as the devices' own answers.
    const onAbort = (): void => {
      settle({ kind: "aborted" });
      endAll("ORIGINATOR_CANCEL");
    };
    const cancelNoAnswer = (request.clock ?? ctx.clock).after(request.timeoutMs, () => {
      settle({ kind: "failed", code: 480, cause: "NO_ANSWER" });
      endAll("NO_ANSWER");
    });

    for (const leg of legs) {
      const onState = (change: ChannelChange): void => {
        if (change.to === "ringing") {
          request.origin?.ring();
        } else if (change.to === "answered") {
          pending.delete(leg);
          settle({ kind: "answered", channel: leg });
          endAll("LOSE_RACE");
        } else if (change.to === "hungup") {
          pending.delete(leg);
          // A leg we ended ourselves (a 2xx "code") is no device's refusal.
          if (leg.hangupCode !== undefined && leg.hangupCode >= 300) codes.push(leg.hangupCode);
          if (pending.size === 0 && !settled) {
            const code = bestFailure(codes) ?? 480;
            settle({ kind: "failed", code, cause: causeOfSipCode(code) });
          }
        }
      };
      leg.on("state", onState);
      unlisten.push(() => leg.off("state", onState));
      // A device may have rung or refused while the other offers were being made.
      if (leg.state === "ringing") request.origin?.ring();
    }
    request.signal.addEventListener("abort", onAbort, { once: true });
    const done = legs.filter((leg) => leg.state === "hungup");
    for (const leg of done) {
      pending.delete(leg);
      if (leg.hangupCode !== undefined && leg.hangupCode >= 300) codes.push(leg.hangupCode);
    }
    const answered = legs.find((leg) => leg.answered);
    if (answered) {
      pending.delete(answered);
      settle({ kind: "answered", channel: answered });
      endAll("LOSE_RACE");
    } else if (pending.size === 0) {
      const code = bestFailure(codes) ?? 480;
      settle({ kind: "failed", code, cause: causeOfSipCode(code) });
    }
  });
}

export interface NumberDialRequest {
  accountId: string;
  realm: string;
  /** The outside number called. */
  number: string;
  /** Shown to the called party. */
  caller: ChannelParty;
  timeoutMs: number;
  signal: AbortSignal;
  /** The channel the call is placed for (its origin). */
  origin?: Channel;
}

/**
 * Calls an outside number through the signalling's carrier (`dialOut`): answered, refused, rung
 * out, or `SUBSCRIBER_ABSENT` when nothing carries calls to it (the server has no carrier of its
 * own; the simulator carries calls to its callers' numbers).
 */
export async function dialNumber(ctx: CallContext, request: NumberDialRequest): Promise<DialResult> {
  if (request.signal.aborted) return { kind: "aborted" };
  const signalling = ctx.signalling;
  if (!signalling?.dialOut) return { kind: "failed", code: 480, cause: "SUBSCRIBER_ABSENT" };
  const offered = await offeredLeg(ctx, request.origin);
  if (!offered) return { kind: "failed", code: 500, cause: "NORMAL_TEMPORARY_FAILURE" };
  const { leg: media, offer } = offered;
  if (request.signal.aborted) {
    await media.close("cancelled");
    return { kind: "aborted" };
  }
  const { caller, number, realm } = request;
  const call = signalling.dialOut({ accountId: request.accountId, number }, { offer, from: { user: caller.number, display: caller.name }, to: { user: number } });
  if (!call) {
    await media.close("no carrier");
    return { kind: "failed", code: 480, cause: "SUBSCRIBER_ABSENT" };
  }
  const leg = ctx.channel({
    sip: { direction: "outbound", call },
    media,
    originId: request.origin?.id,
    identity: {
      accountId: request.accountId,
      realm,
      // No device of the account: the number is the far end's only name.
      deviceId: number,
      username: number,
      presenceId: `${number}@${realm}`,
      caller,
      callee: { name: number, number },
      destination: number,
      request: `${number}@${realm}`,
      from: `${caller.number}@${realm}`,
      to: `${number}@${realm}`,
    },
  });
  return race(ctx, request, [leg]);
}

/** A new leg of the server's with its offer; undefined (reported, the leg closed) when the offer failed. */
async function offeredLeg(ctx: CallContext, origin?: Channel): Promise<{ leg: WebRtcLeg; offer: string } | undefined> {
  // A bridge that forwards on arrival stays within one media worker when its legs share one.
  const beside = ctx.media.forwardBridge ? origin?.media : undefined;
  const leg = ctx.media.createLeg(beside === undefined ? {} : { beside });
  try {
    return { leg, offer: await leg.createOffer() };
  } catch (err) {
    ctx.onError(err, "making an offer");
    await leg.close("offer failed");
    return undefined;
  }
}

/** Offers a call to one device; undefined when it is not registered (or the offer failed). */
async function startLeg(ctx: CallContext, request: DialRequest, target: DialTarget): Promise<Channel | undefined> {
  const signalling = ctx.signalling;
  if (!signalling || target.device.data.enabled === false) return undefined;
  const { device, owner } = target;
  const ref = { accountId: request.accountId, deviceId: device.id };
  // A phone inside the server (a simulated agent's) gets one side of an in-memory pair, no leg.
  let media: CallMedia;
  let far: CallMedia | undefined;
  let offer = "";
  if (signalling.directMedia?.(ref) === true) [media, far] = memoryMediaPair();
  else {
    const offered = await offeredLeg(ctx, request.origin);
    if (!offered) return undefined;
    ({ leg: media, offer } = offered);
  }
  if (request.signal.aborted) {
    await media.close("cancelled");
    return undefined;
  }
  const username = sipUsernameOf(device);
  const caller = request.caller;
  const call = signalling.invite(ref, {
    offer,
    from: { user: caller.number, display: caller.name },
    to: { user: username },
    headers: request.headers,
    ...(far ? { media: far } : {}),
  });
  if (!call) {
    await media.close("not registered");
    return undefined;
  }
  const realm = request.realm;
  return ctx.channel({
    sip: { direction: "outbound", call },
    media,
    originId: request.origin?.id,
    identity: {
      accountId: request.accountId,
      realm,
      deviceId: device.id,
      username,
      ownerId: ownerIdOf(device),
      presenceId: presenceIdOf(device, owner, realm),
      caller,
      callee: deviceParty(device, owner),
      destination: username,
      request: `${username}@${realm}`,
      from: `${caller.number}@${realm}`,
      to: `${username}@${realm}`,
    },
  });
}
