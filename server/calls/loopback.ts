// A loopback: two channels joined back to back inside the server, as FreeSWITCH's loopback endpoint
// that the hosted service dials for transfers. Leg `b` is a call to a number that runs the number's
// callflow like any device's call (whatever its modules do: ring, queue, play); leg `a` is that
// call's far end, an ordinary answered channel that can be bridged to whoever should hear it.
// Audio, DTMF, answer and hang-up cross between the two in memory: no SIP, no RTP.
import { EventEmitter } from "node:events";
import { memoryMediaPair } from "../media/index.js";
import type {
  CallParty,
  DeviceRef,
  InboundCall,
  InboundCallEvents,
  OutboundCall,
  OutboundCallEvents,
} from "../sip/call-signalling.js";
import { newId } from "../store/index.js";
import type { Channel, ChannelIdentity } from "./channel.js";
import type { CallContext } from "./context.js";
import { inheritInteraction } from "./interaction.js";

export interface Loopback {
  /** The far end of the call: outbound, answered once `b` is. */
  a: Channel;
  /** The call to the number: inbound, as if `for`'s device had dialled it. */
  b: Channel;
}

export interface LoopbackRequest {
  /** The leg the call is made for: both legs speak for its device and caller id. */
  for: Channel;
  /** The number dialled. */
  target: string;
}

/**
 * Opens the two legs and answers them: resolves once both are answered, or undefined when the
 * pair could not come up. `b` runs no callflow yet: the caller starts it (B2bua.run).
 *
 * Both legs carry the device of `for` (a callflow then leaves that device out of what it rings,
 * as for its own calls) but no owner: they are the server's legs, not calls of the user, so the
 * user's channel list and call history keep showing the one leg the user's phone has.
 */
export async function openLoopback(ctx: CallContext, request: LoopbackRequest): Promise<Loopback | undefined> {
  const { for: origin, target } = request;
  const [mediaA, mediaB] = memoryMediaPair();
  const device: DeviceRef = { accountId: origin.accountId, deviceId: origin.identity.deviceId };
  const callA = new LoopbackOutbound(newId(ctx.store.random), device);
  const callB = new LoopbackInbound(newId(ctx.store.random), device, origin.self, target);
  callA.connect(callB);
  const realm = origin.identity.realm;
  const caller = origin.self;
  const identity: ChannelIdentity = {
    accountId: origin.accountId,
    realm,
    deviceId: origin.identity.deviceId,
    username: origin.identity.username,
    authorizingType: origin.identity.authorizingType,
    presenceId: origin.identity.presenceId,
    caller,
    callee: { name: target, number: target },
    destination: target,
    request: `${target}@${realm}`,
    from: `${caller.number}@${realm}`,
    to: `${target}@${realm}`,
  };
  const a = ctx.channel({ sip: { direction: "outbound", call: callA }, media: mediaA, originId: origin.id, identity });
  let b: Channel;
  try {
    b = ctx.channel({ sip: { direction: "inbound", call: callB }, media: mediaB, identity });
  } catch (err) {
    a.hangup("NORMAL_TEMPORARY_FAILURE");
    throw err;
  }
  // The consultation and whatever the target's callflow bridges are part of the caller's interaction.
  for (const leg of [a, b]) inheritInteraction(leg, origin);
  const aAnswered = settled(a);
  if (!(await b.answer()) || !(await aAnswered)) {
    a.hangup("NORMAL_TEMPORARY_FAILURE");
    b.hangup("NORMAL_TEMPORARY_FAILURE");
    return undefined;
  }
  return { a, b };
}

/** True once the leg is answered, false if it hangs up first. */
function settled(leg: Channel): Promise<boolean> {
  return new Promise((resolve) => {
    const check = (): boolean => {
      if (leg.answered) resolve(true);
      else if (leg.over) resolve(false);
      else return false;
      return true;
    };
    if (check()) return;
    const onState = (): void => {
      if (check()) leg.off("state", onState);
    };
    leg.on("state", onState);
  });
}

/** Signals cross on a later turn of the event loop, as a message would, never inside the sender's step. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Leg `b`'s SIP side: the INVITE the loopback "received" for the number. */
class LoopbackInbound extends EventEmitter<InboundCallEvents> implements InboundCall {
  readonly from: CallParty;
  readonly to: CallParty;
  readonly offer = "";
  readonly headers = new Map<string, string[]>();
  #peer: LoopbackOutbound | undefined;

  constructor(
    readonly callId: string,
    readonly device: DeviceRef,
    caller: { name: string; number: string },
    readonly dialled: string,
  ) {
    super();
    this.from = { user: caller.number, display: caller.name };
    this.to = { user: dialled };
  }

  bind(peer: LoopbackOutbound): void {
    this.#peer = peer;
  }

  ringing(): void {
    this.#tell((peer) => peer.emit("ringing"));
  }

  async answer(): Promise<void> {
    this.#tell((peer) => peer.emit("answered", ""));
  }

  reject(code: number, reason = ""): void {
    this.#tell((peer) => peer.emit("rejected", code, reason));
  }

  async hangup(): Promise<void> {
    this.#tell((peer) => peer.emit("bye"));
  }

  async reinvite(): Promise<string> {
    return "";
  }

  #tell(signal: (peer: LoopbackOutbound) => void): void {
    const peer = this.#peer;
    if (peer) void nextTurn().then(() => signal(peer));
  }
}

/** Leg `a`'s SIP side: the INVITE the loopback "sent" to the number. */
class LoopbackOutbound extends EventEmitter<OutboundCallEvents> implements OutboundCall {
  #peer: LoopbackInbound | undefined;

  constructor(
    readonly callId: string,
    readonly device: DeviceRef,
  ) {
    super();
  }

  connect(peer: LoopbackInbound): void {
    this.#peer = peer;
    peer.bind(this);
  }

  cancel(): void {
    this.#tell((peer) => peer.emit("cancel"));
  }

  async hangup(): Promise<void> {
    this.#tell((peer) => peer.emit("bye"));
  }

  async reinvite(): Promise<string> {
    return "";
  }

  #tell(signal: (peer: LoopbackInbound) => void): void {
    const peer = this.#peer;
    if (peer) void nextTurn().then(() => signal(peer));
  }
}
