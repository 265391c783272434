// The queues' stored intervals on a real store: one collection per local day with a document per
// queue, a day view reading one queue's day, an account's load reading only the days asked, and session
// 9's single callq_intervals collection moved into the day collections on the first read.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { dayBounds, emptyFigures, type QueueInterval } from "../../server/callq/index.js";
import { IntervalDays, intervalsCollection, LEGACY_INTERVALS_COLLECTION } from "../../server/callq-host/index.js";
import { dayDocId, legacyIntervalDoc, legacyIntervalId, storeIntervals } from "../../server/callq-host/intervals.js";
import { Store } from "../../server/store/index.js";
import { ACCOUNT } from "../helpers/callq.js";

const QUEUE = "q1".padEnd(32, "0");
const OTHER = "q2".padEnd(32, "0");
let dir: string | undefined;
let store: Store | undefined;

afterEach(async () => {
  await store?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  store = undefined;
  dir = undefined;
});

async function openStore(): Promise<Store> {
  dir ??= await mkdtemp(join(tmpdir(), "sb-interval-days-"));
  store = await Store.open({ dir });
  return store;
}

/** The interval of `queueId` starting `minutes` after the local midnight of `day`, with `offered` callers. */
function interval(queueId: string, day: string, minutes: number, offered: number): QueueInterval {
  const midnight = dayBounds(day)?.start ?? 0;
  return { ...emptyFigures(), queue_id: queueId, start: midnight + minutes * 60_000, offered, answered: offered };
}

describe("the queues' stored intervals", () => {
  it("keeps each local day in its own collection; a day view reads one queue's intervals of that day", async () => {
    const s = await openStore();
    const ledger = storeIntervals(s);
    const mine = [interval(QUEUE, "2026-03-02", 0, 1), interval(QUEUE, "2026-03-02", 23 * 60 + 45, 2)];
    for (const i of [...mine, interval(OTHER, "2026-03-02", 0, 5), interval(QUEUE, "2026-03-03", 0, 7)]) await ledger.save(ACCOUNT, i);
    // Saved again: the same document, the latest figures.
    const again = { ...interval(QUEUE, "2026-03-02", 0, 3) };
    await ledger.save(ACCOUNT, again);
    const expected = [again, mine[1]];
    // One document per queue and day.
    expect((await s.account(ACCOUNT, intervalsCollection("2026-03-02"))).all().map((d) => d.id).sort()).toEqual([dayDocId(QUEUE, "2026-03-02"), dayDocId(OTHER, "2026-03-02")].sort());
    expect((await s.account(ACCOUNT, intervalsCollection("2026-03-03"))).size).toBe(1);
    expect(await new IntervalDays(s).day(ACCOUNT, QUEUE, "2026-03-02")).toEqual(expected);
    expect(await new IntervalDays(s).day(ACCOUNT, QUEUE, "2026-03-04")).toEqual([]);
    // An account's load: the intervals from `since` to `until`, from those days' collections.
    const since = dayBounds("2026-03-02")?.start ?? 0;
    const loaded = await ledger.load(ACCOUNT, since + 60 * 60_000, dayBounds("2026-03-03")?.start ?? 0);
    expect(loaded.map((i) => [i.queue_id, i.offered]).sort()).toEqual([
      [QUEUE, 2],
      [QUEUE, 7],
    ]);
  });

  it("moves session 9's single collection into the day collections on the first read, then reads the days", async () => {
    let s = await openStore();
    const legacy = await s.account(ACCOUNT, LEGACY_INTERVALS_COLLECTION);
    const old = [interval(QUEUE, "2026-03-02", 15, 4), interval(QUEUE, "2026-03-03", 30, 6), interval(OTHER, "2026-03-03", 30, 1)];
    for (const i of old) await legacy.create(legacyIntervalDoc(i), { id: legacyIntervalId(i) });
    // A move cut short wrote this interval into its day already: that copy is the newer one.
    const newer = interval(QUEUE, "2026-03-03", 30, 9);
    await storeIntervals(s).save(ACCOUNT, newer);
    await s.close();

    s = await openStore();
    expect(await new IntervalDays(s).day(ACCOUNT, QUEUE, "2026-03-03")).toEqual([newer]);
    expect((await s.account(ACCOUNT, LEGACY_INTERVALS_COLLECTION)).size).toBe(0);
    expect((await s.account(ACCOUNT, intervalsCollection("2026-03-02"))).all().map((d) => d.id)).toEqual([dayDocId(QUEUE, "2026-03-02")]);
    await s.close();

    // Nothing is lost across a restart: the days hold them now.
    s = await openStore();
    expect(await new IntervalDays(s).day(ACCOUNT, QUEUE, "2026-03-02")).toEqual([old[0]]);
    expect(await new IntervalDays(s).day(ACCOUNT, OTHER, "2026-03-03")).toEqual([old[2]]);
  });
});
