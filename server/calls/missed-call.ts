// notification.missed_call.<call_id>: a call that rang a user or a device and ended without being
// bridged to anyone, published once after its CHANNEL_DESTROY (missed_call webhooks pick it up).
import { toGregorianSeconds } from "../clock.js";
import type { EventSink } from "./event-sink.js";
import type { Channel, ChannelParty } from "./channel.js";

export interface MissedCallTarget {
  /** The user rung (the user module), or the owner of the device rung. */
  ownerId?: string;
  deviceId?: string;
  callee: ChannelParty;
}

export class MissedCalls {
  readonly #expected = new WeakSet<Channel>();

  constructor(private readonly bus: EventSink) {}

  /** The call rings `target`; the first target named is the one a miss is reported for. */
  expect(channel: Channel, target: MissedCallTarget): void {
    if (this.#expected.has(channel) || channel.state === "hungup") return;
    this.#expected.add(channel);
    channel.on("state", (change) => {
      if (change.to === "hungup" && !channel.everBridged) this.#publish(channel, target, change.at);
    });
  }

  #publish(channel: Channel, target: MissedCallTarget, at: number): void {
    const id = channel.identity;
    const [fromUser = "", fromRealm = ""] = id.from.split("@");
    const [toUser = "", toRealm = ""] = id.to.split("@");
    const data: Record<string, unknown> = {
      type: "missed_call",
      account_id: id.accountId,
      call_id: channel.id,
      caller_id_name: id.caller.name,
      caller_id_number: id.caller.number,
      callee_id_name: target.callee.name,
      callee_id_number: target.callee.number,
      from: id.from,
      from_user: fromUser,
      from_realm: fromRealm,
      to: id.to,
      to_user: toUser,
      to_realm: toRealm,
      timestamp: toGregorianSeconds(at),
      call_bridged: false,
      message_left: false,
      hangup_cause: channel.hangupCause,
    };
    if (target.ownerId !== undefined) data.owner_id = target.ownerId;
    if (target.deviceId !== undefined) data.device_id = target.deviceId;
    this.bus.publish({ account_id: id.accountId, routing_key: `notification.missed_call.${channel.id}`, name: "missed_call", data });
  }
}
