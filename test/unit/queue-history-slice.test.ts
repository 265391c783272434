// The History panel's slice with a fake history API: a queue's day, every queue summed interval by
// interval with the service level drawn from the sums, the latest choice's answer winning over an
// older one, and a refusal in words.
import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../renderer/api/client.js";
import { serviceLevelOf, type HistoryInterval, type QueueHistoryApi } from "../../renderer/api/queue-history.js";
import { ALL_QUEUES, localDay, shiftDay } from "../../renderer/state/queue-history.js";
import { consoleStore, deferred } from "../helpers/console-store.js";

const row = (start: number, offered: number, answered: number, abandoned: number, answeredWithin: number): HistoryInterval => ({ start, time: "", offered, answered, abandoned, timedOut: 0, answeredWithin });

function fixture(day: (queueId: string, day: string) => Promise<HistoryInterval[]>) {
  const asked: string[] = [];
  const api: QueueHistoryApi = {
    day: (queueId, d) => {
      asked.push(`${queueId} ${d}`);
      return day(queueId, d);
    },
  };
  const f = consoleStore({ queueHistoryApi: () => api });
  f.store.setState((s) => ({ queues: { ...s.queues, list: [{ id: "sales", name: "Sales" }, { id: "support", name: "Support" }] } }));
  return { ...f, asked };
}

describe("the queue history slice", () => {
  it("shows a queue's day, and every queue's summed with the service level of the sums", async () => {
    const f = fixture(async (queueId) => (queueId === "sales" ? [row(0, 4, 3, 1, 2), row(900_000, 0, 0, 0, 0)] : [row(0, 2, 1, 1, 1), row(900_000, 1, 1, 0, 1)]));
    await f.signIn("supervisor");
    await f.store.getState().showQueueHistory("sales", "2026-03-02");
    expect(f.store.getState().queueHistory).toMatchObject({ queueId: "sales", day: "2026-03-02", loading: false, error: null });
    expect(f.store.getState().queueHistory.intervals?.map((i) => i.offered)).toEqual([4, 0]);

    await f.store.getState().showQueueHistory(ALL_QUEUES, "2026-03-02");
    const all = f.store.getState().queueHistory.intervals ?? [];
    expect(all.map((i) => [i.offered, i.answered, i.abandoned, i.answeredWithin])).toEqual([
      [6, 4, 2, 3],
      [1, 1, 0, 1],
    ]);
    // 3 answered within of 6 who stopped waiting; not the average of the queues' 66.7% and 50%.
    expect(serviceLevelOf(all[0] ?? row(0, 0, 0, 0, 0))).toBe(50);
    expect(f.asked).toEqual(["sales 2026-03-02", "sales 2026-03-02", "support 2026-03-02"]);
  });

  it("opens on today, and lands only the latest choice's answer", async () => {
    const slow = deferred<HistoryInterval[]>();
    const f = fixture(async (queueId) => (queueId === "sales" ? slow.promise : [row(0, 1, 1, 0, 1)]));
    await f.signIn("supervisor");
    const first = f.store.getState().showQueueHistory("sales");
    expect(f.store.getState().queueHistory.day).toBe(localDay(f.clock.now()));
    await f.store.getState().showQueueHistory("support", shiftDay(localDay(f.clock.now()), -1));
    slow.resolve([row(0, 9, 9, 0, 9)]);
    await first;
    expect(f.store.getState().queueHistory).toMatchObject({ queueId: "support", loading: false });
    expect(f.store.getState().queueHistory.intervals?.map((i) => i.offered)).toEqual([1]);
  });

  it("names the figures with their own choice: while a new choice is read the previous one's stay under its name, and a failure leaves none", async () => {
    const slow = deferred<HistoryInterval[]>();
    const f = fixture(async (queueId) => {
      if (queueId === "support") return slow.promise;
      if (queueId === "sales") return [row(0, 4, 3, 1, 2)];
      throw new ApiRequestError("http", 500, "internal_error", null, null, "GET answered 500");
    });
    await f.signIn("supervisor");
    await f.store.getState().showQueueHistory("sales", "2026-03-02");
    expect(f.store.getState().queueHistory).toMatchObject({ queueId: "sales", day: "2026-03-02", loading: false, shown: { queueId: "sales", day: "2026-03-02" } });

    const next = f.store.getState().showQueueHistory("support", "2026-03-01");
    // The controls show the new choice; the figures are still Sales' of 2 March, and say so.
    expect(f.store.getState().queueHistory).toMatchObject({ queueId: "support", day: "2026-03-01", loading: true, shown: { queueId: "sales", day: "2026-03-02" } });
    expect(f.store.getState().queueHistory.intervals?.map((i) => i.offered)).toEqual([4]);
    slow.resolve([row(0, 1, 1, 0, 1)]);
    await next;
    expect(f.store.getState().queueHistory).toMatchObject({ loading: false, shown: { queueId: "support", day: "2026-03-01" } });
    expect(f.store.getState().queueHistory.intervals?.map((i) => i.offered)).toEqual([1]);

    // A choice that cannot be read: no figures, none of another choice's under its name.
    await f.store.getState().showQueueHistory("broken", "2026-03-01");
    expect(f.store.getState().queueHistory).toMatchObject({ queueId: "broken", loading: false, intervals: null, shown: null });
    expect(f.store.getState().queueHistory.error).toBe("The history cannot be read: the server answered 500 (internal_error).");
  });

  it("lands no answer asked before a sign-out: the panel starts empty for whoever signs in next", async () => {
    const slow = deferred<HistoryInterval[]>();
    const f = fixture(() => slow.promise);
    await f.signIn("supervisor");
    const read = f.store.getState().showQueueHistory("sales", "2026-03-02");
    f.store.getState().signOut();
    await f.signIn("agent1");
    slow.resolve([row(0, 9, 9, 0, 9)]);
    await read;
    expect(f.store.getState().queueHistory).toMatchObject({ queueId: ALL_QUEUES, intervals: null, shown: null, loading: false, error: null });
  });

  it("says why the history is refused", async () => {
    const f = fixture(async () => {
      throw new ApiRequestError("http", 403, "forbidden", null, null, "GET answered 403");
    });
    await f.signIn("agent1");
    await f.store.getState().showQueueHistory("sales", "2026-03-02");
    expect(f.store.getState().queueHistory).toMatchObject({ intervals: null, loading: false });
    expect(f.store.getState().queueHistory.error).toBe("You may not read this history: queue figures are for account admins and supervisors (call_monitor).");
  });

  it("moves by local days across month ends", () => {
    expect(shiftDay("2026-03-01", -1)).toBe("2026-02-28");
    expect(shiftDay("2026-12-31", 1)).toBe("2027-01-01");
  });
});
