// A two-party bridge that forwards on arrival (media/forward.ts), through the call engine with fake
// signalling and real werift legs: the phones run on a media engine of their own with a real frame
// clock, the server's media engine on a frame clock moved by hand. Held still, no tick of the
// server's runs, and the phones still hear each other: the packets are forwarded as they arrive.
// Moved, its ticks feed the recorder (both tones in the file); a monitor joining hands the audio to
// the mixer (the parties hear it) and its leaving hands it back, the phones' received sequence
// numbers running on without a gap or a step back. The same with the server's legs in media
// workers: one, or two, where the call engine still makes the callee's leg beside the caller's.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORDING_ATTACHMENT, RECORDINGS_COLLECTION, startCalls, type CallEngine, type Channel } from "../../server/calls/index.js";
import { systemClock } from "../../server/clock.js";
import { seedDemo } from "../../server/demo.js";
import { EventBus } from "../../server/events/bus.js";
import { MediaEngine, RemoteLeg } from "../../server/media/index.js";
import { Store, type DocData, type StoredDoc } from "../../server/store/index.js";
import { ASSETS_DIR } from "../helpers/api.js";
import { connected, FakeSignalling, sleep, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { HandTime } from "../helpers/hand-time.js";
import { middleShare, readStereoWav } from "../helpers/stereo-wav.js";

const CALLER_TONE = 700;
const CALLEE_TONE = 1300;
const MONITOR_TONE = 2000;
const TONES = [CALLER_TONE, CALLEE_TONE, MONITOR_TONE];

describe.each([0, 1, 2])("a two-party bridge forwarding on arrival, the server's legs in %i media workers", (workers) => {
  const time = new HandTime();
  /** The server's frame clock, moved by the pump in real-time steps while it runs. */
  let pump: ReturnType<typeof setInterval> | undefined;
  function runClock(on: boolean): void {
    if (pump) clearInterval(pump);
    pump = on ? setInterval(() => time.advanceTo(time.t + 20), 20) : undefined;
  }

  let dir: string;
  let store: Store;
  let serverMedia: MediaEngine;
  let phoneMedia: MediaEngine;
  let engine: CallEngine;
  let accountId: string;
  const phones = new Map<string, FakePhone>();

  async function phone(username: string): Promise<FakePhone> {
    const found = phones.get(username);
    if (found) return found;
    const devices = await store.account(accountId, "devices");
    const device = devices.all().find((d) => d.data.name === `${username} softphone`);
    if (!device) throw new Error(`no demo softphone for ${username}`);
    const made = signalling.phone({ accountId, deviceId: device.id }, (device.data.sip as { username: string }).username);
    phones.set(username, made);
    return made;
  }
  let signalling: FakeSignalling;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "sb-forward-"));
    store = await Store.open({ dir, clock: systemClock });
    accountId = await seedDemo(store, { assetsDir: ASSETS_DIR, logger: pino({ level: "silent" }) });
    serverMedia = new MediaEngine({ maxSendLatenessMs: Infinity, frameClock: { time }, forwardBridge: true, workers });
    phoneMedia = new MediaEngine({ maxSendLatenessMs: Infinity });
    signalling = new FakeSignalling(phoneMedia);
    engine = startCalls({
      store,
      bus: new EventBus(systemClock),
      media: serverMedia,
      signalling,
      clock: systemClock,
      logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    });
    // The supervisor's phone reaches a callflow that answers it (a tone it hears until it is taken in).
    await (await store.account(accountId, "callflows")).create({
      numbers: ["3999"],
      patterns: [],
      flow: { module: "play", data: { id: "tone_stream://%(60000,0,400)" }, children: {} },
    });
  });

  afterAll(async () => {
    runClock(false);
    await engine?.close();
    await serverMedia?.close();
    await phoneMedia?.close();
    await store?.close();
    await rm(dir, { recursive: true, force: true });
  });

  function serverChannel(callId: string): Channel {
    const channel = engine.channels.all().find((c) => c.id === callId);
    if (!channel) throw new Error(`no channel for ${callId}`);
    return channel;
  }

  async function setRecording(username: string, callRecording: unknown): Promise<void> {
    const users = await store.account(accountId, "users");
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
      caller = await (await phone("admin")).dial("1002");
      callee = await (await phone("agent1")).incoming();
      await callee.answer();
      await caller.reaches("talking");
      await connected(caller, callee);
      await caller.say(`tone_stream://${CALLER_TONE}`);
      await callee.say(`tone_stream://${CALLEE_TONE}`);
      const bridge = engine.context.bridgeOf(serverChannel(caller.callId));
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
      const supervisor = await (await phone("agent2")).dial("3999");
      await supervisor.reaches("talking");
      await connected(supervisor);
      await supervisor.say(`tone_stream://${MONITOR_TONE}`);
      const bridge = engine.context.bridgeOf(serverChannel(caller.callId));
      if (!bridge) throw new Error("no bridge");
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
      await until(() => engine.channels.size === 0, "every channel to hang up");
      await engine.recordings.flush();
      runClock(false);
      const recordings = await store.account(accountId, RECORDINGS_COLLECTION);
      const doc = recordings.all().find((d) => d.data.call_id === caller.callId);
      expect(doc).toBeDefined();
      const bytes = await readFile(join(recordings.file.replace(/\.json$/, ".attachments"), (doc as StoredDoc).id, RECORDING_ATTACHMENT));
      const wav = readStereoWav(bytes);
      expect(middleShare(wav.left, CALLER_TONE), "left: the caller's voice").toBeGreaterThan(0.8);
      expect(middleShare(wav.right, CALLEE_TONE), "right: what the caller hears").toBeGreaterThan(0.5);
      expect(middleShare(wav.left, CALLEE_TONE)).toBeLessThan(0.05);
    });
});
