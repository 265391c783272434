// A two-party bridge's forward path: each audio packet one leg receives is sent on the other leg at
// once (its own SSRC, sequence numbers and a timestamp mapped onto its outgoing timeline), with no
// receive buffer and no wait for a tick of the frame clock; the far end's jitter buffer absorbs the
// network's jitter, as a media relay's does. The mixer path runs on underneath (receive buffers,
// the mix, the recorder's taps) and takes over, for one direction at once, whenever a leg plays
// anything else than the mix it was given (hold music, a prompt); the bridge ends the pairing when
// a third party, a monitor or a mute needs the mixer. Legs in one thread call each other; in
// different media workers the packets cross on a MessageChannel between the two workers, never
// through the main thread.

import { MessageChannel } from "node:worker_threads";
import type { AudioSource } from "./audio-frame.js";
import type { CallMedia } from "./leg-api.js";
import { PeerLeg } from "./leg.js";
import { RemoteLeg } from "./worker/remote-leg.js";

/**
 * Whether two-party bridges forward on arrival by default: yes since session 22 (through the
 * server 1.08x of a direct call's latency quiet and 1.18x with a busy core, the mixer path 1.46x
 * and 1.44x: bench/README); SWITCHBOARD_FORWARD_BRIDGE=0 keeps every bridge on the mixer path,
 * =choose forwards with each direction's path chosen from its lateness (forwardPathChoiceDefault).
 */
export function forwardBridgeDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SWITCHBOARD_FORWARD_BRIDGE !== "0";
}

/**
 * Whether legs choose a forwarded direction's path from its lateness by default (path-choice.ts):
 * on arrival while on time, on the ticks through a receive buffer while late. SWITCHBOARD_FORWARD_BRIDGE=choose.
 */
export function forwardPathChoiceDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SWITCHBOARD_FORWARD_BRIDGE === "choose";
}

/** One side of a pairing: a leg and the mix it plays while the pairing stands (what it hears). */
export interface ForwardSide {
  media: CallMedia;
  hears: AudioSource;
}

/**
 * A pairing that stands: the two legs forward to each other. `decode(false)` stops their decoding of
 * what they receive (and their ticks' reading of the receive buffers and the mix) while nothing
 * but the two parties needs the audio (no recorder).
 */
export interface Forwarding {
  /** Ends the pairing: the legs send the mix on their ticks again (and decode, if they did not). */
  end(): void;
  decode(on: boolean): void;
  /** Whether the legs decode what they receive. */
  readonly decoding: boolean;
  /**
   * Asked once a tick after decode(true), before the mixer takes over: whether each leg's receive
   * buffer plays audio again, or its far end sent nothing for the last `quietTicks` asks (on hold,
   * gone), so the mix the legs send from the next tick starts with no silent frame.
   */
  ready(quietTicks: number): boolean;
}

/**
 * Pairs two legs (both in this thread, or both in media workers) so each forwards what it receives
 * to the other; returns the pairing, or undefined when the two cannot be paired (direct media, one
 * leg in this thread and one in a worker).
 */
export function forwardPair(a: ForwardSide, b: ForwardSide): Forwarding | undefined {
  const x = a.media;
  const y = b.media;
  if (x === y) return undefined;
  if (x instanceof PeerLeg && y instanceof PeerLeg) {
    x.forwardTo(y);
    y.forwardTo(x);
    x.forwardWhile(a.hears);
    y.forwardWhile(b.hears);
    return pairing([x, y], () => {
      for (const leg of [x, y]) {
        leg.forwardTo(undefined);
        leg.forwardWhile(undefined);
      }
    });
  }
  if (x instanceof RemoteLeg && y instanceof RemoteLeg) {
    if (x.state === "closed" || y.state === "closed") return undefined;
    if (x.worker === y.worker) {
      x.worker.forward(x.id, { to: y.id });
      y.worker.forward(y.id, { to: x.id });
    } else {
      const { port1, port2 } = new MessageChannel();
      x.worker.forward(x.id, { port: port1 });
      y.worker.forward(y.id, { port: port2 });
    }
    x.forwardWhile(a.hears);
    y.forwardWhile(b.hears);
    return pairing([x, y], () => {
      for (const leg of [x, y]) {
        leg.forwardWhile(undefined);
        if (leg.state !== "closed") leg.worker.forward(leg.id, {});
      }
    });
  }
  return undefined;
}

function pairing(legs: readonly (PeerLeg | RemoteLeg)[], unpair: () => void): Forwarding {
  let ended = false;
  let decoding = true;
  // Per leg, for ready(): packets received at the last ask, and asks since that count last moved.
  const seen = legs.map(() => ({ received: -1, quiet: 0 }));
  return {
    end() {
      if (ended) return;
      ended = true;
      // Decoding first: a leg that sends the mix again has its buffer filling from now on.
      for (const leg of legs) leg.decode(true);
      unpair();
    },
    decode(on) {
      if (ended || on === decoding) return;
      decoding = on;
      for (const leg of legs) leg.decode(on);
      for (const s of seen) {
        s.received = -1;
        s.quiet = 0;
      }
    },
    get decoding() {
      return decoding;
    },
    ready(quietTicks) {
      let ready = true;
      for (let i = 0; i < legs.length; i++) {
        const leg = legs[i];
        if (leg.state === "closed" || leg.primed) continue;
        const s = seen[i];
        const received = leg.stats().packetsReceived;
        s.quiet = received === s.received ? s.quiet + 1 : 0;
        s.received = received;
        if (s.quiet < quietTicks) ready = false;
      }
      return ready;
    },
  };
}
