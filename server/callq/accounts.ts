// The engine's accounts: each read once, when the engine first needs it, from the directory (its
// queues and users) and the ledger (its recipients' saved states); changes arrive afterwards.
import { dayBounds, dayOf } from "./intervals.js";
import type { CallqDirectory, CallqUser, IntervalLedger, RecipientDayLedger, RecipientLedger } from "./ports.js";
import { Queue } from "./queue.js";
import { Recipient } from "./recipient.js";
import type { Wiretap } from "./views.js";

export interface Account {
  id: string;
  queues: Map<string, Queue>;
  recipients: Map<string, Recipient>;
  users: Map<string, CallqUser>;
  dispatchScheduled: boolean;
  /** Per supervisor: whom they listen to, how, and the target's leg (its call id). */
  wiretaps: Map<string, Wiretap>;
  /** Seconds the current wrap-up of each recipient is extended by (its queue's wrap-up). */
  wrapupS: Map<string, number>;
}

export class Accounts {
  readonly #loading = new Map<string, Promise<Account>>();
  readonly #loaded = new Map<string, Account>();
  /** Changes that arrived while the account loaded, applied before anyone sees it. */
  readonly #pending = new Map<string, ((account: Account) => void)[]>();

  constructor(
    private readonly directory: CallqDirectory,
    private readonly ledger: RecipientLedger,
    /** Unix ms of the account's queue time, for the restored recipients' timers. */
    private readonly now: (accountId: string) => number,
    /** The queues' stored intervals: yesterday's and today's seed their figures. */
    private readonly intervals: IntervalLedger,
    /** The recipients' stored days: yesterday's and today's seed their figures. */
    private readonly days: RecipientDayLedger,
  ) {}

  /** The account, loading it on first use; a failed load is tried again next time. */
  get(accountId: string): Promise<Account> {
    let loading = this.#loading.get(accountId);
    if (!loading) {
      loading = this.#load(accountId);
      this.#loading.set(accountId, loading);
      loading.catch(() => {
        this.#loading.delete(accountId);
        this.#pending.delete(accountId);
      });
    }
    return loading;
  }

  /** The account if it is loaded already. */
  loaded(accountId: string): Account | undefined {
    return this.#loaded.get(accountId);
  }

  all(): IterableIterator<Account> {
    return this.#loaded.values();
  }

  /**
   * Applies a change to a loaded account at once; to one being loaded as soon as it is, before
   * whoever waits for it sees it (the load may have read the change already: applying it again
   * changes nothing); and not at all to one not yet asked for, whose load will read it.
   */
  whenLoaded(accountId: string, apply: (account: Account) => void): void {
    const loaded = this.#loaded.get(accountId);
    if (loaded) apply(loaded);
    else if (this.#loading.has(accountId)) this.#pending.set(accountId, [...(this.#pending.get(accountId) ?? []), apply]);
  }

  async #load(accountId: string): Promise<Account> {
    const loadedAt = this.now(accountId);
    const [{ queues, users }, saved, intervals, days] = await Promise.all([
      this.directory.load(accountId),
      this.ledger.load(accountId),
      this.intervals.load(accountId, yesterdayStart(loadedAt), loadedAt),
      this.days.load(accountId, dayOf(yesterdayStart(loadedAt))),
    ]);
    const account: Account = {
      id: accountId,
      queues: new Map(queues.map((config) => [config.id, new Queue(accountId, config)])),
      recipients: new Map(),
      users: new Map(users.map((user) => [user.id, { ...user }])),
      dispatchScheduled: false,
      wiretaps: new Map(),
      wrapupS: new Map(),
    };
    for (const queue of account.queues.values()) queue.stats.seed(intervals);
    const now = this.now(accountId);
    for (const [id, state] of saved) {
      if (account.users.get(id)?.recipient !== true) continue;
      const r = new Recipient(accountId, id);
      r.restore(state, now);
      r.days.seed(days);
      // The state comes back now: its time counts from the restart on.
      r.days.observe(r.state, r.awayReason, now);
      account.recipients.set(id, r);
    }
    this.#loaded.set(accountId, account);
    const pending = this.#pending.get(accountId) ?? [];
    this.#pending.delete(accountId);
    for (const apply of pending) apply(account);
    return account;
  }
}

/** Local midnight starting the day before `now`'s (the staffing estimate may look back past midnight). */
function yesterdayStart(now: number): number {
  const today = dayBounds(dayOf(now));
  return today === undefined ? now : (dayBounds(dayOf(today.start - 1))?.start ?? today.start);
}
