// A bridge: two answered channels talking through one mixer on the shared 20 ms clock, DTMF passed
// across, and music on hold for the party of a leg whose device holds. With the media engine's
// forward path on, the two legs forward each packet to each other on arrival while nothing else
// needs the mixer (no monitor, no mute); the mixer runs on underneath for the recorder and takes
// over when a monitor joins, a leg is muted, or a leg plays anything else (hold music, a prompt).
// With no recorder either, the legs stop decoding what they receive (nothing reads it); handing the
// audio back to the mixer then waits until their receive buffers play again (a leg whose far end
// sent nothing for 10 ticks is not waited for), the legs forwarding meanwhile, so the parties hear
// no silent frame at the switch.
import { silence, type AudioSource, type Forwarding, type MediaEngine, type Mixer, type MonitorMode } from "../media/index.js";
import type { Channel, ChannelDtmf, ChannelChange } from "./channel.js";

/** Ticks without a packet after which a leg's receive buffer is not waited for (Forwarding.ready). */
const QUIET_TICKS = 10;

export type BridgeEnd = { reason: "hangup"; gone: Channel; survivor: Channel } | { reason: "released" };

export interface BridgeOptions {
  media: MediaEngine;
  /** The music the party of `holder` hears while `holder` holds. */
  holdMusic(holder: Channel): Promise<AudioSource>;
  /**
   * What becomes of the other leg when one hangs up. Unset, it is hung up too (the hosted
   * service's hangup-after-bridge); a transfer in progress decides otherwise.
   */
  afterHangup?(survivor: Channel, gone: Channel): void;
  onError?(err: unknown, what: string): void;
}

export class Bridge {
  readonly a: Channel;
  readonly b: Channel;
  /** Settles once, when a leg hangs up or the bridge is released. */
  readonly ended: Promise<BridgeEnd>;
  readonly #options: BridgeOptions;
  readonly #mixer: Mixer;
  /** What each member hears from the mixer. */
  readonly #hears = new Map<string, AudioSource>();
  /** Bumped on every hold change of a member, so late-loading music is not played after a resume. */
  readonly #holdTurn = new Map<string, number>();
  readonly #unlisten: (() => void)[] = [];
  /** Supervisors' legs listening in (monitor members of the mixer), with their unlisteners. */
  readonly #monitors = new Map<Channel, () => void>();
  /** The legs' pairing to forward on arrival (media/forward.ts), while it stands. */
  #forwarding: Forwarding | undefined;
  /** While a pairing whose legs did not decode is being ended: stops the wait for their buffers. */
  #handingBack: (() => void) | undefined;
  #settle: (end: BridgeEnd) => void = () => undefined;
  #over = false;

  constructor(a: Channel, b: Channel, options: BridgeOptions) {
    if (a === b) throw new Error("a channel cannot be bridged to itself");
    for (const c of [a, b]) {
      if (c.state !== "answered") throw new Error(`channel ${c.id} is ${c.state}; a bridge needs answered, unbridged channels`);
    }
    this.a = a;
    this.b = b;
    this.#options = options;
    this.#mixer = options.media.mixer();
    this.ended = new Promise((resolve) => (this.#settle = resolve));
    for (const [member, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const hears = this.#mixer.join(member.id, member.media.incoming);
      this.#hears.set(member.id, hears);
      member.media.play(hears);
      member.joined(other.id);
      const onState = (change: ChannelChange) => {
        if (change.to === "hungup") this.#memberGone(member);
      };
      const onHold = (on: boolean) => this.#hold(member, on);
      const onDtmf = (dtmf: ChannelDtmf) => {
        // Digits cross the bridge as RFC 4733 whichever way they came in, as a PBX passes them.
        if (!this.#over) other.media.sendDtmf(dtmf.digit).catch((err: unknown) => this.#options.onError?.(err, "relaying DTMF"));
      };
      member.on("state", onState);
      member.on("hold", onHold);
      member.on("dtmf", onDtmf);
      this.#unlisten.push(() => {
        member.off("state", onState);
        member.off("hold", onHold);
        member.off("dtmf", onDtmf);
      });
    }
    // A device that put its far end on hold before this bridge formed is still holding.
    for (const member of [a, b]) if (member.farEndHolding) this.#hold(member, true);
    if (options.media.forwardBridge) {
      this.#unlisten.push(options.media.mutes.onChange(() => this.#updateForward()));
      this.#mixer.watchTaps(() => this.#updateForward());
      this.#unlisten.push(() => this.#mixer.watchTaps(undefined));
      this.#updateForward();
    }
  }

  /** Whether the legs forward to each other on arrival (media/forward.ts) rather than through the mixer. */
  get forwarding(): boolean {
    return this.#forwarding !== undefined;
  }

  /**
   * Pairs the two legs to forward on arrival while nothing but the two parties needs the mixer, or
   * ends it; the legs decode what they receive only while a tap (a recorder) reads it.
   */
  #updateForward(): void {
    const mutes = this.#options.media.mutes;
    const muted = [this.a, this.b].some((c) => mutes.muted(c.id, "voice") || mutes.muted(c.id, "hearing"));
    const want = !this.#over && this.#monitors.size === 0 && !muted;
    if (want && !this.#forwarding) {
      const hearsA = this.#hears.get(this.a.id);
      const hearsB = this.#hears.get(this.b.id);
      if (hearsA && hearsB) this.#forwarding = this.#options.media.forward({ media: this.a.media, hears: hearsA }, { media: this.b.media, hears: hearsB });
    }
    const forwarding = this.#forwarding;
    if (!forwarding) return;
    if (want) {
      this.#handingBack?.();
      this.#handingBack = undefined;
      forwarding.decode(this.#mixer.tapped);
      return;
    }
    if (this.#handingBack) {
      if (this.#over) this.#endForwarding();
      return;
    }
    // The legs decoded all along (a recorder), or the bridge is over: the mixer takes over at once.
    if (forwarding.decoding || this.#over) {
      this.#endForwarding();
      return;
    }
    // Decoding again: the legs forward on until both receive buffers play audio (a party that sent
    // nothing for 10 ticks is not waited for), so the mix the legs then send has no silent frame.
    forwarding.decode(true);
    this.#handingBack = this.#options.media.clock.subscribe(() => {
      if (forwarding.ready(QUIET_TICKS)) this.#endForwarding();
    });
  }

  #endForwarding(): void {
    this.#handingBack?.();
    this.#handingBack = undefined;
    this.#forwarding?.end();
    this.#forwarding = undefined;
  }

  get over(): boolean {
    return this.#over;
  }

  /** The mixer, for taps that see the call's audio (a recorder, recording.ts). */
  get mixer(): Mixer {
    return this.#mixer;
  }

  other(channel: Channel): Channel {
    return channel === this.a ? this.b : this.a;
  }

  has(channel: Channel): boolean {
    return channel === this.a || channel === this.b;
  }

  /**
   * Adds a supervisor's answered leg as a monitor of the party `target`: it hears both parties;
   * eavesdrop: nobody hears it, whisper: `target` does, barge: both do. It leaves when it hangs up.
   */
  addMonitor(channel: Channel, mode: MonitorMode, target: Channel): void {
    if (this.#over) throw new Error("the bridge is over");
    if (!this.has(target)) throw new Error(`channel ${target.id} is no party of this bridge`);
    if (this.has(channel) || this.#monitors.has(channel)) throw new Error(`channel ${channel.id} is already in this bridge`);
    channel.media.play(this.#mixer.join(channel.id, channel.media.incoming, { kind: "monitor", mode, target: target.id }));
    const onState = (change: ChannelChange) => {
      if (change.to === "hungup") this.removeMonitor(channel);
    };
    channel.on("state", onState);
    this.#monitors.set(channel, () => channel.off("state", onState));
    this.#updateForward();
  }

  /** Switches a monitor between eavesdrop, whisper and barge. */
  setMonitorMode(channel: Channel, mode: MonitorMode): void {
    if (!this.#monitors.has(channel)) throw new Error(`channel ${channel.id} is no monitor of this bridge`);
    this.#mixer.setMonitor(channel.id, mode);
  }

  /** Takes a monitor out; its leg stays up, silent. */
  removeMonitor(channel: Channel): void {
    const unlisten = this.#monitors.get(channel);
    if (!unlisten) return;
    unlisten();
    this.#monitors.delete(channel);
    this.#mixer.leave(channel.id);
    if (channel.state !== "hungup") channel.media.play(silence);
    this.#updateForward();
  }

  /** Ends the bridge and leaves both legs up and silent, for a transfer to move them. */
  release(): void {
    if (this.#over) return;
    this.#finish();
    for (const member of [this.a, this.b]) member.left();
    this.#settle({ reason: "released" });
  }

  /**
   * Stops the bridge's own mixing and leaves both legs up, unbridged, for a conference to join
   * (a merge). Unlike release(), `ended` waits: the call the bridge stood for goes on in the
   * conference, and whoever waits on it (a queue's offer, a callflow) learns of its end through
   * the function returned, which the conference calls when one of the two legs leaves it.
   */
  handOver(): (end: BridgeEnd) => void {
    if (this.#over) throw new Error("the bridge is over");
    this.#finish();
    for (const member of [this.a, this.b]) member.left();
    return (end) => this.#settle(end);
  }

  #memberGone(gone: Channel): void {
    if (this.#over) return;
    this.#finish();
    const survivor = this.other(gone);
    const afterHangup = this.#options.afterHangup;
    this.#settle({ reason: "hangup", gone, survivor });
    if (afterHangup) {
      survivor.left();
      afterHangup(survivor, gone);
    } else {
      survivor.hangup("NORMAL_CLEARING");
    }
  }

  #hold(holder: Channel, on: boolean): void {
    if (this.#over) return;
    holder.holding(on);
    const party = this.other(holder);
    const turn = (this.#holdTurn.get(holder.id) ?? 0) + 1;
    this.#holdTurn.set(holder.id, turn);
    if (!on) {
      party.media.play(this.#hears.get(party.id));
      return;
    }
    // Until the music is loaded the party hears nothing rather than the holder.
    party.media.play(silence);
    this.#options.holdMusic(holder).then(
      (music) => {
        if (!this.#over && this.#holdTurn.get(holder.id) === turn) party.media.play(music);
      },
      (err: unknown) => this.#options.onError?.(err, "loading music on hold"),
    );
  }

  #finish(): void {
    this.#over = true;
    for (const unlisten of this.#unlisten) unlisten();
    for (const monitor of [...this.#monitors.keys()]) this.removeMonitor(monitor);
    this.#updateForward();
    for (const member of [this.a, this.b]) {
      this.#mixer.leave(member.id);
      if (member.state !== "hungup") member.media.play(silence);
    }
  }
}
