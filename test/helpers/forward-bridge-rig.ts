// The rig of the forwarding-bridge call tests (test/calls/forward-bridge*.test.ts): the call engine
// with fake signalling and real werift legs, the server's media engine forwarding two-party bridges
// on a frame clock moved by hand (in `workers` media workers), the phones on a media engine of their
// own with a real frame clock, the demo account seeded, and a callflow on 3999 that answers with a
// long tone (a supervisor's phone reaches it, then is taken into a bridge). Registers its own
// beforeAll/afterAll in the calling describe block.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll } from "vitest";
import { startCalls, type CallEngine, type Channel } from "../../server/calls/index.js";
import type { Bridge } from "../../server/calls/bridge.js";
import { systemClock } from "../../server/clock.js";
import { seedDemo } from "../../server/demo.js";
import { EventBus } from "../../server/events/bus.js";
import { MediaEngine } from "../../server/media/index.js";
import { Store } from "../../server/store/index.js";
import { ASSETS_DIR } from "./api.js";
import { connected, FakeSignalling, type FakePhone, type PhoneCall } from "./fake-signalling.js";
import { HandTime } from "./hand-time.js";

export interface ForwardBridgeRig {
  /** The server's frame clock. */
  readonly time: HandTime;
  /** Moves the server's frame clock in real-time steps of a frame (on), or holds it still (off). */
  runClock(on: boolean): void;
  /** The demo softphone of a demo user, made once. */
  phone(username: string): Promise<FakePhone>;
  /** The server's channel of a call. */
  serverChannel(callId: string): Channel;
  /**
   * admin's phone calls agent1's (1002), agent1 answers, both connect, then each plays a tone
   * (the caller `callerTone` Hz, the callee `calleeTone` Hz).
   */
  bridgedCall(callerTone: number, calleeTone: number): Promise<{ caller: PhoneCall; callee: PhoneCall }>;
  /** agent2's phone on 3999 (the long tone), connected, playing a `tone` Hz tone: a monitor to be. */
  supervisorCall(tone: number): Promise<PhoneCall>;
  /** The bridge the server's channel of a call is in (throws if none). */
  bridgeOf(call: PhoneCall): Bridge;
  readonly store: Store;
  readonly engine: CallEngine;
  readonly accountId: string;
}

export function forwardBridgeRig(workers: number, dirPrefix: string): ForwardBridgeRig {
  const time = new HandTime();
  let pump: ReturnType<typeof setInterval> | undefined;
  let dir = "";
  let store: Store | undefined;
  let serverMedia: MediaEngine | undefined;
  let phoneMedia: MediaEngine | undefined;
  let signalling: FakeSignalling | undefined;
  let engine: CallEngine | undefined;
  let accountId = "";
  const phones = new Map<string, FakePhone>();
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`the rig's ${name} is not set up (used outside the describe block's tests?)`);
    return value;
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), dirPrefix));
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
    await (await store.account(accountId, "callflows")).create({
      numbers: ["3999"],
      patterns: [],
      flow: { module: "play", data: { id: "tone_stream://%(60000,0,400)" }, children: {} },
    });
  });

  afterAll(async () => {
    if (pump) clearInterval(pump);
    await engine?.close();
    await serverMedia?.close();
    await phoneMedia?.close();
    await store?.close();
    if (dir !== "") await rm(dir, { recursive: true, force: true });
  });

  return {
    time,
    runClock(on: boolean): void {
      if (pump) clearInterval(pump);
      pump = on ? setInterval(() => time.advanceTo(time.t + 20), 20) : undefined;
    },
    async phone(username: string): Promise<FakePhone> {
      const found = phones.get(username);
      if (found) return found;
      const devices = await ready(store, "store").account(accountId, "devices");
      const device = devices.all().find((d) => d.data.name === `${username} softphone`);
      if (!device) throw new Error(`no demo softphone for ${username}`);
      const made = ready(signalling, "signalling").phone({ accountId, deviceId: device.id }, (device.data.sip as { username: string }).username);
      phones.set(username, made);
      return made;
    },
    serverChannel(callId: string): Channel {
      const channel = ready(engine, "engine").channels.all().find((c) => c.id === callId);
      if (!channel) throw new Error(`no channel for ${callId}`);
      return channel;
    },
    async bridgedCall(callerTone: number, calleeTone: number): Promise<{ caller: PhoneCall; callee: PhoneCall }> {
      const caller = await (await this.phone("admin")).dial("1002");
      const callee = await (await this.phone("agent1")).incoming();
      await callee.answer();
      await caller.reaches("talking");
      await connected(caller, callee);
      await caller.say(`tone_stream://${callerTone}`);
      await callee.say(`tone_stream://${calleeTone}`);
      return { caller, callee };
    },
    async supervisorCall(tone: number): Promise<PhoneCall> {
      const supervisor = await (await this.phone("agent2")).dial("3999");
      await supervisor.reaches("talking");
      await connected(supervisor);
      await supervisor.say(`tone_stream://${tone}`);
      return supervisor;
    },
    bridgeOf(call: PhoneCall): Bridge {
      const bridge = ready(engine, "engine").context.bridgeOf(this.serverChannel(call.callId));
      if (!bridge) throw new Error(`no bridge for ${call.callId}`);
      return bridge;
    },
    get store(): Store {
      return ready(store, "store");
    },
    get engine(): CallEngine {
      return ready(engine, "engine");
    },
    get accountId(): string {
      return accountId;
    },
  };
}
