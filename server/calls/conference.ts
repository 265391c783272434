// Merging two of a user's calls into one three-way conference, mixed on the server: the user's
// device keeps the leg named in the request and its second leg is hung up, so the device has one
// call in which it hears both parties and both hear it and each other. Any member may leave; the
// others stay connected until one is left alone, who is then hung up. For whoever waits on the
// kept call's bridge (a queue offer), that call lasts until its agent's leg or its party leaves.
import { silence, type MediaEngine, type Mixer } from "../media/index.js";
import type { Bridge } from "./bridge.js";
import type { Channel, ChannelChange } from "./channel.js";
import { ChannelCommandError } from "./command-error.js";
import type { CallContext } from "./context.js";
import { isInTransfer } from "./transfer.js";

/** The conference each member channel is in, while it is. */
const conferences = new WeakMap<Channel, Conference>();

/** The conference the channel is a member of now, if any. */
export function conferenceOf(channel: Channel): Conference | undefined {
  return conferences.get(channel);
}

/**
 * Members talking through one mixer: every member hears every other. A member whose device
 * holds is taken out of what the others hear (the others keep talking); it hears nothing new
 * until it resumes. Digits are not relayed: with three parties there is no one far end.
 */
export class Conference {
  readonly #mixer: Mixer;
  /** Each member's unlistener, which also tells whoever asked (add's `onLeave`) that it left. */
  readonly #members = new Map<Channel, () => void>();
  #over = false;

  constructor(media: MediaEngine) {
    this.#mixer = media.mixer();
  }

  get members(): Channel[] {
    return [...this.#members.keys()];
  }

  /**
   * Joins an answered, unbridged leg; `otherLeg` is what its channel reports as its other leg.
   * `onLeave` runs once when it leaves (hangs up, or the conference ends).
   */
  add(channel: Channel, otherLeg: string, onLeave?: () => void): void {
    if (this.#over) throw new Error("the conference is over");
    if (channel.state !== "answered") throw new Error(`channel ${channel.id} is ${channel.state}; a conference needs answered, unbridged channels`);
    conferences.set(channel, this);
    this.#join(channel, false);
    channel.joined(otherLeg);
    const onState = (change: ChannelChange) => {
      if (change.to === "hungup") this.#leave(channel);
    };
    const onHold = (on: boolean) => {
      if (this.#over || !this.#members.has(channel)) return;
      channel.holding(on);
      this.#mixer.leave(channel.id);
      this.#join(channel, on);
    };
    channel.on("state", onState);
    channel.on("hold", onHold);
    this.#members.set(channel, () => {
      channel.off("state", onState);
      channel.off("hold", onHold);
      onLeave?.();
    });
    if (channel.farEndHolding) onHold(true);
  }

  /** In the mix, speaking with its leg's audio, or silent while its device holds. */
  #join(channel: Channel, held: boolean): void {
    channel.media.play(this.#mixer.join(channel.id, held ? silence : channel.media.incoming));
  }

  #leave(channel: Channel): void {
    const unlisten = this.#members.get(channel);
    if (!unlisten) return;
    unlisten();
    this.#members.delete(channel);
    conferences.delete(channel);
    this.#mixer.leave(channel.id);
    if (this.#members.size > 1) return;
    // Alone: the call is over for the last member too, as hangup-after-bridge would have it.
    this.#over = true;
    for (const last of this.#members.keys()) {
      this.#members.get(last)?.();
      this.#members.delete(last);
      conferences.delete(last);
      this.#mixer.leave(last.id);
      last.hangup("NORMAL_CLEARING");
    }
  }
}

/**
 * Merges the call of `line` (one of a device's legs, bridged to a party or already in a
 * conference) with the call of `other` (another leg of the same user, bridged to a party): the
 * party of `other` joins `line` and its party in a conference, and `other` is hung up. Checked
 * against the legs as they are now; a refusal is thrown as a ChannelCommandError.
 */
export function merge(ctx: CallContext, line: Channel, other: Channel): Conference {
  if (line === other) throw new ChannelCommandError("target_call_id", "a call cannot be merged with itself: name the user's other call");
  const joining = movableBridge(ctx, other, "target_call_id");
  const existing = conferenceOf(line);
  const lineBridge = existing ? undefined : movableBridge(ctx, line, "action");
  if (lineBridge === joining) throw new ChannelCommandError("target_call_id", "the two channels are the two legs of one call");
  const newParty = joining.other(other);
  if (newParty === line) throw new ChannelCommandError("target_call_id", "the two channels are the two legs of one call");
  const party = lineBridge?.other(line);
  // The other line's legs change hands before its bridge goes, so the logic that bridged them
  // lets go quietly. The kept line's call goes on in the conference: its bridge is handed over,
  // and ends for whoever waits on it (a queue, for the agent's wrap-up) when one of its legs leaves.
  for (const leg of [other, newParty]) leg.claim("merge");
  const endLine = lineBridge?.handOver();
  joining.release();
  other.hangup("NORMAL_CLEARING");
  const conference = existing ?? new Conference(ctx.media);
  if (party && endLine) {
    conference.add(line, party.id, () => endLine({ reason: "hangup", gone: line, survivor: party }));
    conference.add(party, line.id, () => endLine({ reason: "hangup", gone: party, survivor: line }));
  }
  conference.add(newParty, line.id);
  return conference;
}

function movableBridge(ctx: CallContext, channel: Channel, field: string): Bridge {
  const bridge = ctx.bridgeOf(channel);
  if (!bridge) throw new ChannelCommandError(field, `channel ${channel.id} is not bridged: only calls in progress can be merged`);
  if (isInTransfer(channel) || isInTransfer(bridge.other(channel))) {
    throw new ChannelCommandError(field, `an attended transfer of channel ${channel.id} is in progress: complete or cancel it first`);
  }
  return bridge;
}
