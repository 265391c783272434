// What the engine's parts share: the store, the bus, the media engine, SIP signalling, the live
// channels and bridges, the media library, the clock and the log; modules and commands get it.
import type { Clock } from "../clock.js";
import type { EventSink } from "./event-sink.js";
import type { MediaEngine } from "../media/index.js";
import type { CallSignalling } from "../sip/call-signalling.js";
import type { Store } from "../store/index.js";
import { Bridge } from "./bridge.js";
import { Channel, type ChannelOptions } from "./channel.js";
import { Channels } from "./channels.js";
import { newInteractionId, shareInteraction } from "./interaction.js";
import { MediaLibrary } from "./media-library.js";
import { MissedCalls } from "./missed-call.js";

export interface CallLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface CallContextOptions {
  store: Store;
  bus: EventSink;
  media: MediaEngine;
  /** Absent when the server runs without SIP calls: nothing can be rung then. */
  signalling?: CallSignalling;
  clock: Clock;
  logger: CallLogger;
}

export class CallContext {
  readonly store: Store;
  readonly bus: EventSink;
  readonly media: MediaEngine;
  readonly signalling: CallSignalling | undefined;
  readonly clock: Clock;
  readonly logger: CallLogger;
  readonly channels = new Channels();
  readonly library: MediaLibrary;
  readonly missedCalls: MissedCalls;
  readonly #bridges = new Map<string, Bridge>();

  constructor(options: CallContextOptions) {
    this.store = options.store;
    this.bus = options.bus;
    this.media = options.media;
    this.signalling = options.signalling;
    this.clock = options.clock;
    this.logger = options.logger;
    this.library = new MediaLibrary(options.store, options.media);
    this.missedCalls = new MissedCalls(options.bus);
  }

  /** Background work that failed: logged, never thrown (a call must not crash the server). */
  readonly onError = (err: unknown, what: string): void => {
    this.logger.warn({ err }, `calls: ${what} failed`);
  };

  /** A new channel on the shared clock and bus, already in the registry (CHANNEL_CREATE sent). */
  channel(options: Omit<ChannelOptions, "clock" | "bus" | "onError">): Channel {
    // Checked before the channel exists, so a refused one never announces itself on the bus.
    if (this.channels.get(options.sip.call.callId)) throw new Error(`a channel with call id ${options.sip.call.callId} is already live`);
    const channel = new Channel({ ...options, clock: this.clock, bus: this.bus, onError: this.onError });
    this.channels.add(channel);
    return channel;
  }

  /** The bridge a channel is in now, if any. */
  bridgeOf(channel: Channel): Bridge | undefined {
    const bridge = this.#bridges.get(channel.id);
    return bridge && !bridge.over ? bridge : undefined;
  }

  /**
   * Bridges two answered channels; a holding leg's party hears the holder's device's music.
   * `afterHangup` replaces hangup-after-bridge (see Bridge).
   */
  bridge(a: Channel, b: Channel, afterHangup?: (survivor: Channel, gone: Channel) => void): Bridge {
    shareInteraction(a, b, () => newInteractionId(this.clock.now(), this.store.random));
    const bridge = new Bridge(a, b, {
      media: this.media,
      holdMusic: (holder) => this.library.holdMusic(holder.accountId, holder.identity.deviceId),
      afterHangup,
      onError: this.onError,
    });
    this.#bridges.set(a.id, bridge);
    this.#bridges.set(b.id, bridge);
    void bridge.ended.then(() => {
      for (const id of [a.id, b.id]) if (this.#bridges.get(id) === bridge) this.#bridges.delete(id);
    });
    return bridge;
  }
}
