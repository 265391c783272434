// A two-party bridge forwarding on arrival (media/forward.ts) with no recorder and no monitor: its
// legs decode nothing (no packet into their receive buffers, no mix read per tick) and the phones
// still hear each other. A monitor joining turns decoding back on, and the mixer takes over only
// at a tick where both legs' receive buffers play audio: the server's frame clock is moved by hand,
// a tick at a time, and until then the bridge goes on forwarding. Through the call engine with fake
// signalling and real werift legs, the server's legs in this thread or in two media workers (the
// recorded case, where the legs decode for the recorder: test/calls/forward-bridge.test.ts).
import { describe, expect, it } from "vitest";
import { type Channel } from "../../server/calls/index.js";
import { PeerLeg, RemoteLeg, type WebRtcLeg } from "../../server/media/index.js";
import { sleep, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { forwardBridgeRig } from "../helpers/forward-bridge-rig.js";

const CALLER_TONE = 700;
const CALLEE_TONE = 1300;
const MONITOR_TONE = 2000;
const TONES = [CALLER_TONE, CALLEE_TONE, MONITOR_TONE];

describe.each([0, 2])("a forwarding bridge with no recorder, the server's legs in %i media workers", (workers) => {
  const rig = forwardBridgeRig(workers, "sb-forward-decode-");
  const { time, runClock, serverChannel } = rig;

  let caller: PhoneCall;
  let callee: PhoneCall;

  const pushed = (c: Channel): number => (c.media as WebRtcLeg).stats().fifo.pushed;
  const received = (c: Channel): number => (c.media as WebRtcLeg).stats().packetsReceived;
  const primed = (c: Channel): boolean => (c.media as PeerLeg | RemoteLeg).primed;

  it("an unrecorded call's legs forward, and decode nothing, while the clock runs", async () => {
    runClock(true);
    ({ caller, callee } = await rig.bridgedCall(CALLER_TONE, CALLEE_TONE));
    const bridge = rig.bridgeOf(caller);
    expect(bridge.forwarding).toBe(true);
    expect(bridge.mixer.tapped, "no recorder").toBe(false);
    const before = [bridge.a, bridge.b].map((c) => ({ pushed: pushed(c), received: received(c) }));
    const [atCaller, atCallee] = await Promise.all([caller.hears(TONES), callee.hears(TONES)]);
    expect(atCaller[CALLEE_TONE]).toBeGreaterThan(0.9);
    expect(atCallee[CALLER_TONE]).toBeGreaterThan(0.9);
    for (const [i, c] of [bridge.a, bridge.b].entries()) {
      await until(() => received(c) >= before[i].received + 20, "packets received by the server's leg");
      expect(pushed(c) - before[i].pushed, "frames decoded into the leg's receive buffer").toBe(0);
    }
  });

  it("a monitor joining: the legs decode again, and the mixer takes over at a tick where both buffers play", async () => {
    const supervisor = await rig.supervisorCall(MONITOR_TONE);
    const bridge = rig.bridgeOf(caller);
    runClock(false);
    bridge.addMonitor(serverChannel(supervisor.callId), "barge", serverChannel(caller.callId));
    // Still forwarding: the legs' buffers are empty until packets decoded again reach them.
    expect(bridge.forwarding).toBe(true);
    let ticks = 0;
    while (bridge.forwarding) {
      // A tick at a time, each after the phones' packets have had real time to arrive.
      await sleep(20);
      time.advanceTo(time.t + 20);
      ticks++;
    }
    expect(ticks, "ticks before the mixer took over").toBeGreaterThan(0);
    expect([bridge.a, bridge.b].map(primed), "both legs' receive buffers playing at the switch").toEqual([true, true]);
    runClock(true);
    const [atCaller, atCallee] = await Promise.all([caller.hears(TONES), callee.hears(TONES)]);
    expect(atCaller[MONITOR_TONE]).toBeGreaterThan(0.2);
    expect(atCallee[MONITOR_TONE]).toBeGreaterThan(0.2);
    expect(atCaller[CALLEE_TONE]).toBeGreaterThan(0.2);
    supervisor.hangup();
    await until(() => bridge.forwarding, "the forwarding back once the monitor left");
    caller.hangup();
    await until(() => rig.engine.channels.size === 0, "every channel to hang up");
    // Every switch kept each outgoing stream's sequence numbers running: no gap, nothing from behind.
    for (const phoneCall of [caller, callee]) {
      const stats = phoneCall.leg.stats();
      expect(stats.packetsLost).toBe(0);
      expect(stats.packetsDiscarded).toBe(0);
    }
  });
});
