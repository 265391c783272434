// A two-party bridge that forwards on arrival (media/forward.ts), through the call engine with fake
// signalling and real werift legs: the phones run on a media engine of their own with a real frame
// clock, the server's media engine on a frame clock moved by hand. Held still, no tick of the
// server's runs, and the phones still hear each other: the packets are forwarded as they arrive.
// Moved, its ticks feed the recorder (both tones in the file); a monitor joining hands the audio to
// the mixer (the parties hear it) and its leaving hands it back, the phones' received sequence
// numbers running on without a gap or a step back. The same with the server's legs in media
// workers: one, or two, where the call engine still makes the callee's leg beside the caller's.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RECORDING_ATTACHMENT, RECORDINGS_COLLECTION } from "../../server/calls/index.js";
import { RemoteLeg } from "../../server/media/index.js";
import { type DocData, type StoredDoc } from "../../server/store/index.js";
import { sleep, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { forwardBridgeRig } from "../helpers/forward-bridge-rig.js";
import { middleShare, readStereoWav } from "../helpers/stereo-wav.js";

const CALLER_TONE = 700;
const CALLEE_TONE = 1300;
const MONITOR_TONE = 2000;
const TONES = [CALLER_TONE, CALLEE_TONE, MONITOR_TONE];

describe.each([0, 1, 2])("a two-party bridge forwarding on arrival, the server's legs in %i media workers", (workers) => {
  const rig = forwardBridgeRig(workers, "sb-forward-");
  const { time, runClock, serverChannel } = rig;

  async function setRecording(username: string, callRecording: unknown): Promise<void> {
    const users = await rig.store.account(rig.accountId, "users");
    const user = users.all().find((u) => u.data.username === username) as StoredDoc;
    const data: DocData = { ...user.data, call_recording: callRecording };
    await users.update(user.id, data);
  }

    let caller: PhoneCall;
    let callee: PhoneCall;

    it("the phones hear each other with the server's frame clock held still", async () => {
      await setRecording("agent1", { inbound: { onnet: { enabled: true } } });
      // Ticks while the call is set up (the recorder starts on them), then none.
      runClock(true);
      ({ caller, callee } = await rig.bridgedCall(CALLER_TONE, CALLEE_TONE));
      const bridge = rig.engine.context.bridgeOf(serverChannel(caller.callId));
      expect(bridge?.forwarding).toBe(true);
      if (workers > 0 && bridge) {
        const threads = new Set([bridge.a.media, bridge.b.media].map((m) => (m instanceof RemoteLeg ? m.threadId : -1)));
        // The callee's leg is made beside the caller's (dial.ts): one thread forwards both ways.
        // (Legs on two workers forward on a MessageChannel: test/media/forward-pair.)
        expect(threads.size, "the two legs' threads").toBe(1);
      }

      runClock(false);
      const still = time.t;
      const [atCaller, atCallee] = await Promise.all([caller.hears(TONES), callee.hears(TONES)]);
      expect(time.t, "no tick of the server's clock").toBe(still);
      expect(atCaller[CALLEE_TONE]).toBeGreaterThan(0.9);
      expect(atCallee[CALLER_TONE]).toBeGreaterThan(0.9);
      expect(atCaller[CALLER_TONE] + atCallee[CALLEE_TONE]).toBeLessThan(0.05);
    });

    it("a monitor barging in takes the audio to the mixer, and its leaving brings the forwarding back", async () => {
      runClock(true);
      const supervisor = await rig.supervisorCall(MONITOR_TONE);
      const bridge = rig.bridgeOf(caller);
      const monitor = serverChannel(supervisor.callId);
      bridge.addMonitor(monitor, "barge", serverChannel(caller.callId));
      expect(bridge.forwarding).toBe(false);
      const [mixedAtCaller, mixedAtCallee] = await Promise.all([caller.hears(TONES), callee.hears(TONES)]);
      expect(mixedAtCaller[MONITOR_TONE]).toBeGreaterThan(0.2);
      expect(mixedAtCallee[MONITOR_TONE]).toBeGreaterThan(0.2);
      expect(mixedAtCaller[CALLEE_TONE]).toBeGreaterThan(0.2);

      bridge.removeMonitor(monitor);
      expect(bridge.forwarding).toBe(true);
      runClock(false);
      const [atCaller, atCallee] = await Promise.all([caller.hears(TONES), callee.hears(TONES)]);
      expect(atCaller[CALLEE_TONE]).toBeGreaterThan(0.9);
      expect(atCallee[CALLER_TONE]).toBeGreaterThan(0.9);
      expect(atCaller[MONITOR_TONE] + atCallee[MONITOR_TONE]).toBeLessThan(0.05);
      supervisor.hangup();
      // Every switch kept each outgoing stream's sequence numbers running: the phones saw no gap
      // and no packet from behind (on loopback, nothing is lost on the way).
      for (const phoneCall of [caller, callee]) {
        const stats = phoneCall.leg.stats();
        expect(stats.packetsReceived).toBeGreaterThan(50);
        expect(stats.packetsLost).toBe(0);
        expect(stats.packetsDiscarded).toBe(0);
      }
    });

    it("the recording holds both parties' tones, taken from the forwarded legs' decoded audio", async () => {
      runClock(true);
      await sleep(1000);
      caller.hangup();
      await until(() => rig.engine.channels.size === 0, "every channel to hang up");
      await rig.engine.recordings.flush();
      runClock(false);
      const recordings = await rig.store.account(rig.accountId, RECORDINGS_COLLECTION);
      const doc = recordings.all().find((d) => d.data.call_id === caller.callId);
      expect(doc).toBeDefined();
      const bytes = await readFile(join(recordings.file.replace(/\.json$/, ".attachments"), (doc as StoredDoc).id, RECORDING_ATTACHMENT));
      const wav = readStereoWav(bytes);
      expect(middleShare(wav.left, CALLER_TONE), "left: the caller's voice").toBeGreaterThan(0.8);
      expect(middleShare(wav.right, CALLEE_TONE), "right: what the caller hears").toBeGreaterThan(0.5);
      expect(middleShare(wav.left, CALLEE_TONE)).toBeLessThan(0.05);
    });
});
