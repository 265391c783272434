// A call engine for tests: a fresh store with the demo account, the bus with every event kept, one
// media engine for the server and the phones, fake signalling, and the engine on top of them.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { startCalls, type CallEngine } from "../../server/calls/index.js";
import { systemClock, type Clock } from "../../server/clock.js";
import { seedDemo } from "../../server/demo.js";
import { EventBus, type BusEvent } from "../../server/events/bus.js";
import { deviceDefaults } from "../../server/api/devices.js";
import { MediaEngine, type FrameClockOptions, type MediaLoadOptions } from "../../server/media/index.js";
import { Store, type DocData, type StoredDoc } from "../../server/store/index.js";
import { ASSETS_DIR } from "./api.js";
import { FakeSignalling, until, type FakePhone } from "./fake-signalling.js";

export interface TestEngine {
  /** The server's clock: its timers (ring timeouts, digit pauses, the store's idle snapshot). */
  clock: Clock;
  store: Store;
  bus: EventBus;
  /** Every event published, in order. */
  events: BusEvent[];
  media: MediaEngine;
  signalling: FakeSignalling;
  engine: CallEngine;
  accountId: string;
  /** What the engine logged at warn and above. */
  warnings: string[];
  user(username: string): Promise<StoredDoc>;
  /** The demo softphone of a user. */
  softphone(username: string): Promise<StoredDoc>;
  /** The phone registered as the demo softphone of `username` (registered on first use). */
  phone(username: string): Promise<FakePhone>;
  /** The phone registered as `device` (registered on first use). */
  phoneFor(device: StoredDoc): FakePhone;
  addDevice(data: DocData): Promise<StoredDoc>;
  addCallflow(data: DocData): Promise<StoredDoc>;
  /** The names of the call events of one call id, in order. */
  callEvents(callId: string): string[];
  /** Resolves once the engine has no live channel left. */
  idle(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * `clock` runs the server's time (a ManualClock lets a test move it on instead of waiting); the
 * audio stays on the media engine's real frame clock either way.
 */
export async function startTestEngine(options: { clock?: Clock; frameClock?: FrameClockOptions; load?: MediaLoadOptions } = {}): Promise<TestEngine> {
  const clock = options.clock ?? systemClock;
  const dir = await mkdtemp(join(tmpdir(), "sb-calls-"));
  const store = await Store.open({ dir, clock });
  const accountId = await seedDemo(store, { assetsDir: ASSETS_DIR, logger: pino({ level: "silent" }) });
  const bus = new EventBus(clock);
  const events: BusEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const warnings: string[] = [];
  const record =
    (level: string) =>
    (obj: object, msg: string): void => {
      warnings.push(`${level}: ${msg} ${JSON.stringify(obj, (_k, v: unknown) => (v instanceof Error ? v.message : v))}`);
    };
  // The server's legs and the phones share this process and its stalls: no leg drops late
  // frames, which would only cut gaps into what the phones hear (see maxSendLatenessMs).
  const media = new MediaEngine({ maxSendLatenessMs: Infinity, frameClock: options.frameClock, load: options.load });
  const signalling = new FakeSignalling(media);
  const engine = startCalls({
    store,
    bus,
    media,
    signalling,
    clock,
    logger: { info: () => undefined, warn: record("warn"), error: record("error") },
  });
  const users = await store.account(accountId, "users");
  const devices = await store.account(accountId, "devices");

  const user = async (username: string): Promise<StoredDoc> => {
    const doc = users.all().find((u) => u.data.username === username);
    if (!doc) throw new Error(`no demo user ${username}`);
    return doc;
  };
  const softphone = async (username: string): Promise<StoredDoc> => {
    const doc = devices.all().find((d) => d.data.name === `${username} softphone`);
    if (!doc) throw new Error(`no demo softphone for ${username}`);
    return doc;
  };
  const phones = new Map<string, FakePhone>();
  const phoneFor = (device: StoredDoc): FakePhone => {
    let phone = phones.get(device.id);
    if (!phone) {
      const sip = device.data.sip as { username: string };
      phone = signalling.phone({ accountId, deviceId: device.id }, sip.username);
      phones.set(device.id, phone);
    }
    return phone;
  };

  return {
    clock,
    store,
    bus,
    events,
    media,
    signalling,
    engine,
    accountId,
    warnings,
    user,
    softphone,
    phone: async (username) => phoneFor(await softphone(username)),
    phoneFor,
    addDevice: (data) => devices.create(deviceDefaults(data, (n) => "ab".repeat(n))),
    addCallflow: async (data) => (await store.account(accountId, "callflows")).create({ numbers: [], patterns: [], ...data }),
    callEvents: (callId) => events.filter((e) => e.routing_key.startsWith("call.") && e.routing_key.endsWith(`.${callId}`)).map((e) => e.name),
    idle: (timeoutMs = 10_000) => until(() => engine.channels.size === 0, "every channel to hang up", timeoutMs),
    async close() {
      await engine.close();
      await media.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
