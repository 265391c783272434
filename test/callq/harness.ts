// A call engine with the queue engine wired in as the server wires it: the demo account, fake
// signalling with real werift phones, the callq modules registered, and helpers for queues.
import type { CallqEngine } from "../../server/callq/engine.js";
import { startCallqHost } from "../../server/callq-host/index.js";
import { ManualClock } from "../../server/clock-control.js";
import { FRAME_SAMPLES, levelDbfs, toneShare } from "../../server/media/index.js";
import { registerCallqModules } from "../../server/callq-host/modules/index.js";
import type { DocData } from "../../server/store/index.js";
import { startTestEngine, type TestEngine } from "../helpers/call-engine.js";

export interface QueueLab extends TestEngine {
  /** The server's time, moved on by the test: ring timeouts, wrap-ups and digit pauses come when it says. */
  clock: ManualClock;
  callq: CallqEngine;
  /** The demo queue's id by name (Sales = 5001, Support = 5002). */
  queueId(name: string): Promise<string>;
  /** Changes a queue's stored settings (the engine follows the store). */
  patchQueue(id: string, patch: DocData): Promise<void>;
  addQueue(data: DocData): Promise<string>;
  userId(username: string): Promise<string>;
  /** The names of the events on one routing key, in order. */
  eventNames(routingKey: string): string[];
  /**
   * Until `done()` holds: the server's clock jumps from timer to timer (a digit pause, a ring
   * timeout) while real time passes for what it does not keep (audio, signalling).
   */
  serverTimeRunsUntil(done: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  /** Waits until the recipient's availability_state is `state`. */
  recipientIs(username: string, state: string, timeoutMs?: number): Promise<void>;
}

export async function startQueueLab(): Promise<QueueLab> {
  const clock = new ManualClock(Date.now());
  const t = await startTestEngine({ clock });
  const host = await startCallqHost({
    store: t.store,
    bus: t.bus,
    scheduler: clock,
    logger: { info: () => undefined, warn: (_obj, msg) => t.warnings.push(`warn: ${msg}`), error: (_obj, msg) => t.warnings.push(`error: ${msg}`) },
  });
  const callq = host.engine;
  registerCallqModules(t.engine, callq);
  const queues = await t.store.account(t.accountId, "callq_queues");
  const userId = async (username: string): Promise<string> => (await t.user(username)).id;
  const close = t.close;
  return Object.assign(t, {
    clock,
    callq,
    async queueId(name: string) {
      const doc = queues.all().find((q) => q.data.name === name);
      if (!doc) throw new Error(`no demo queue ${name}`);
      return doc.id;
    },
    async patchQueue(id: string, patch: DocData) {
      const doc = queues.get(id);
      if (!doc) throw new Error(`no queue ${id}`);
      await queues.update(id, { ...doc.data, ...patch });
      // The engine applies it from the store's change feed a turn later.
      await new Promise((resolve) => setTimeout(resolve, 0));
    },
    async addQueue(data: DocData) {
      return (await queues.create({ queue_type: "queue_basic", members: {}, ...data })).id;
    },
    userId,
    eventNames: (routingKey: string) => t.events.filter((e) => e.routing_key === routingKey).map((e) => e.name),
    async serverTimeRunsUntil(done: () => boolean, what: string, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        const next = clock.nextDue();
        if (next === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        else await clock.advanceTo(next);
      }
    },
    async recipientIs(username: string, wanted: string, timeoutMs = 10_000) {
      const id = await userId(username);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const status = await callq.recipientStatus(t.accountId, id);
        if (status.availability_state === wanted) return;
        if (Date.now() > deadline) throw new Error(`${username} is ${status.availability_state}, not ${wanted}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async close() {
      await host.close();
      await close();
    },
  });
}

/**
 * How many 20 ms frames of `samples` are dominated by each frequency (audible, and over 60% of
 * the frame's energy at it): cadenced beeps counted frame by frame, whatever lies between them.
 */
export function toneFrames(samples: readonly number[], frequencies: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = Object.fromEntries(frequencies.map((f) => [f, 0]));
  for (let at = 0; at + FRAME_SAMPLES <= samples.length; at += FRAME_SAMPLES) {
    const frame = samples.slice(at, at + FRAME_SAMPLES);
    if (levelDbfs(frame) < -50) continue;
    for (const f of frequencies) if (toneShare(frame, f) > 0.6) counts[f] += 1;
  }
  return counts;
}
