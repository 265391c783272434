// The queue engine hosted on a real store (callq-host/) with time run by hand: a manual scheduler, queued calls whose
// offers the test answers, rejects or lets ring out, and the events the engine published.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CallqEngine } from "../../server/callq/engine.js";
import { startCallqHost } from "../../server/callq-host/index.js";
import type { OfferOutcome, OfferRequest, QueuedCall, Scheduler } from "../../server/callq/ports.js";
import { Store, type DocData } from "../../server/store/index.js";

export class ManualScheduler implements Scheduler {
  #now: number;
  #timers: { at: number; seq: number; fn: () => void; live: boolean }[] = [];
  #seq = 0;

  constructor(start = Date.UTC(2026, 10, 21, 12, 0, 0)) {
    this.#now = start;
  }

  now = (): number => this.#now;

  after(ms: number, fn: () => void): () => void {
    const timer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, live: true };
    this.#timers.push(timer);
    return () => {
      timer.live = false;
    };
  }

  /** Moves time on by `ms`, running each timer due on the way (and what it settles) in order. */
  async advance(ms: number): Promise<void> {
    const until = this.#now + ms;
    for (;;) {
      const due = this.#timers.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#now = due.at;
      due.live = false;
      due.fn();
      await settle();
    }
    this.#now = until;
    this.#timers = this.#timers.filter((t) => t.live);
    await settle();
  }
}

/** Lets promise callbacks and queued microtasks run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

export interface PendingOffer {
  request: OfferRequest;
  signal: AbortSignal;
  resolve(outcome: OfferOutcome): void;
  /** Answers; the returned function ends the bridged call. */
  answer(): () => void;
}

/** A caller as the queue sees it; the test plays the call side of every offer. */
export class TestCall implements QueuedCall {
  readonly callId: string;
  readonly caller: { name: string; number: string };
  readonly offers: PendingOffer[] = [];
  #gone = false;
  readonly #goneListeners: (() => void)[] = [];

  constructor(id: string, name = `Caller ${id}`, number = "+15550100") {
    this.callId = id;
    this.caller = { name, number };
  }

  offer(request: OfferRequest, signal: AbortSignal): Promise<OfferOutcome> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (outcome: OfferOutcome): void => {
        if (settled) return;
        settled = true;
        resolve(outcome);
      };
      // As calls/ does: an aborted offer stops ringing and says so.
      signal.addEventListener("abort", () => done({ kind: "cancelled" }), { once: true });
      this.offers.push({
        request,
        signal,
        resolve: done,
        answer: () => {
          let end: () => void = () => undefined;
          const ended = new Promise<void>((r) => (end = r));
          done({ kind: "answered", ended });
          return end;
        },
      });
    });
  }

  onGone(listener: () => void): void {
    if (this.#gone) listener();
    else this.#goneListeners.push(listener);
  }

  hangup(): void {
    if (this.#gone) return;
    this.#gone = true;
    for (const l of this.#goneListeners) l();
  }

  last(): PendingOffer {
    const offer = this.offers.at(-1);
    if (!offer) throw new Error(`no offer made for ${this.callId}`);
    return offer;
  }
}

export interface PublishedEvent {
  account_id: string;
  routing_key: string;
  name: string;
  data: Record<string, unknown>;
}

export const ACCOUNT = "a".repeat(32);

export interface CallqRig {
  engine: CallqEngine;
  store: Store;
  scheduler: ManualScheduler;
  events: PublishedEvent[];
  dir: string;
  user(name: string, extra?: DocData): Promise<string>;
  queue(data: DocData): Promise<string>;
  /** Events of one kind (queue, recipient, session) and optional id, as "name" strings. */
  names(kind: "queue" | "recipient" | "session", id?: string): string[];
  /** A new engine on the same data; its clock starts at `at` (Unix ms) when given, else where the first rig's did. */
  restart(at?: number): Promise<CallqRig>;
  close(): Promise<void>;
}

export async function callqRig(dir?: string, start?: number): Promise<CallqRig> {
  const dataDir = dir ?? (await mkdtemp(join(tmpdir(), "sb-callq-")));
  const store = await Store.open({ dir: dataDir });
  const scheduler = new ManualScheduler(start);
  const events: PublishedEvent[] = [];
  const log = (): void => undefined;
  const host = await startCallqHost({
    store,
    bus: { publish: (e) => events.push(structuredClone(e)) },
    scheduler,
    logger: { info: log, warn: log, error: log },
  });
  const engine = host.engine;
  // Load the account now (its collections are opened from disk), so that later a join or a
  // recipient action needs no I/O and `settle` is enough for it, however slow the disk is.
  await engine.ensureStarted(ACCOUNT);
  const rig: CallqRig = {
    engine,
    store,
    scheduler,
    events,
    dir: dataDir,
    async user(name, extra = {}) {
      const users = await store.account(ACCOUNT, "users");
      const doc = await users.create({ username: name, callq: { enabled: true }, ...extra });
      return doc.id;
    },
    async queue(data) {
      const queues = await store.account(ACCOUNT, "callq_queues");
      const doc = await queues.create(data);
      await settle();
      return doc.id;
    },
    names(kind, id) {
      return events.filter((e) => e.routing_key.startsWith(`callq.${kind}.${id ?? ""}`)).map((e) => e.name);
    },
    async restart(at) {
      await host.close();
      await store.close();
      return callqRig(dataDir, at);
    },
    async close() {
      await host.close();
      await store.close();
      if (!dir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  return rig;
}

export function members(...ids: string[]): Record<string, string> {
  return Object.fromEntries(ids.map((id) => [id, ""]));
}
