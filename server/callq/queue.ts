// One queue's process: its settings, the sessions in it (oldest first), the router's round and
// the day's stats. It runs whether or not anyone waits; the engine drives it.
import type { ActiveAlert } from "./alerts.js";
import type { QueueConfig } from "./queue-config.js";
import { RoundMemory } from "./queue-router.js";
import { QueueStats } from "./queue-stats.js";
import type { Session } from "./session.js";

export class Queue {
  readonly accountId: string;
  #config: QueueConfig;
  /** Member id -> position in the member order. */
  #memberIndex = new Map<string, number>();
  /** Sessions in the queue, oldest first: waiting, being offered, or answered and still talking. */
  readonly sessions: Session[] = [];
  readonly round = new RoundMemory();
  readonly stats: QueueStats;
  /** The tick timer's cancel while somebody waits. */
  cancelTick: (() => void) | undefined;
  /** The alerts last published as fired and not yet cleared, by alertKey. */
  readonly alerts = new Map<string, ActiveAlert>();
  /** Set once the queue's document is deleted. */
  removed = false;

  constructor(accountId: string, config: QueueConfig) {
    this.accountId = accountId;
    this.#config = config;
    this.config = config;
    this.stats = new QueueStats(config.id);
  }

  get config(): QueueConfig {
    return this.#config;
  }

  set config(config: QueueConfig) {
    this.#config = config;
    this.#memberIndex = new Map(config.members.map((id, i) => [id, i]));
  }

  get id(): string {
    return this.#config.id;
  }

  /** The member's place in the offer order, undefined for a non-member. */
  memberIndex(userId: string): number | undefined {
    return this.#memberIndex.get(userId);
  }

  /** Sessions still waiting or being offered. */
  get queuedCount(): number {
    let n = 0;
    for (const s of this.sessions) if (s.queued) n += 1;
    return n;
  }

  /** Callers on the line waiting or being offered (callbacks left the line). */
  get callersQueued(): number {
    let n = 0;
    for (const s of this.sessions) if (s.callerQueued) n += 1;
    return n;
  }

  /** Callbacks not yet connected. */
  get callbacksWaiting(): number {
    let n = 0;
    for (const s of this.sessions) if (s.callbackWaiting) n += 1;
    return n;
  }

  drop(session: Session): void {
    const i = this.sessions.indexOf(session);
    if (i >= 0) this.sessions.splice(i, 1);
  }
}
