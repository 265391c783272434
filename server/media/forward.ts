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

/** Whether two-party bridges forward on arrival by default: SWITCHBOARD_FORWARD_BRIDGE=1 turns it on. */
export function forwardBridgeDefault(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SWITCHBOARD_FORWARD_BRIDGE === "1";
}

/** One side of a pairing: a leg and the mix it plays while the pairing stands (what it hears). */
export interface ForwardSide {
  media: CallMedia;
  hears: AudioSource;
}

/**
 * Pairs two legs (both in this thread, or both in media workers) so each forwards what it receives
 * to the other; returns the function that ends the pairing, or undefined when the two cannot be
 * paired (direct media, one leg in this thread and one in a worker).
 */
export function forwardPair(a: ForwardSide, b: ForwardSide): (() => void) | undefined {
  const x = a.media;
  const y = b.media;
  if (x === y) return undefined;
  if (x instanceof PeerLeg && y instanceof PeerLeg) {
    x.forwardTo(y);
    y.forwardTo(x);
    x.forwardWhile(a.hears);
    y.forwardWhile(b.hears);
    return () => {
      for (const leg of [x, y]) {
        leg.forwardTo(undefined);
        leg.forwardWhile(undefined);
      }
    };
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
    return () => {
      for (const leg of [x, y]) {
        leg.forwardWhile(undefined);
        if (leg.state !== "closed") leg.worker.forward(leg.id, {});
      }
    };
  }
  return undefined;
}
