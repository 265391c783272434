// The main thread's per-tick path without an object per tick (issue 18's 50 + 5 figure, session 18):
// the frame clock re-arms one timer for its whole life (same catch-up, skip and lateness as a
// timer per tick), Node's timer behind it reuses a timeout per millisecond of delay, the media
// workers mark their ticks after the clock's listeners (no microtask per tick), and a worker is
// woken through a word of shared memory (no message per tick). Hand-moved time; no timing asserts.
import { describe, expect, it } from "vitest";
import { FrameClock, NodeTimer } from "../../server/media/frame-clock.js";
import { HandTime } from "../helpers/hand-time.js";
import { TickWake } from "../../server/media/worker/tick-share.js";


/** The same life on a clock: steady ticks, late timers, a stall it catches up, one it skips, a stop and a restart. */
function life(time: HandTime) {
  const clock = new FrameClock({ time, maxCatchUpTicks: 5 });
  const ticks: { tick: number; at: number; late: number }[] = [];
  const listen = () => clock.subscribe((tick) => ticks.push({ tick, at: time.now(), late: clock.lateMs }));
  let stop = listen();
  time.advanceTo(200);
  time.lateMs = 3;
  time.advanceTo(400);
  time.lateMs = 0;
  time.stall(75); // owed ticks, caught up one timer turn apart
  time.advanceTo(600);
  time.stall(500); // beyond 5 owed: skipped
  time.advanceTo(1200);
  const stats = clock.stats();
  const recent = clock.recentLateness();
  stop();
  const pendingAfterStop = time.pending;
  time.advanceTo(2000);
  stop = listen();
  time.advanceTo(2100);
  stop();
  return { ticks, stats, recent, pendingAfterStop, running: clock.running };
}

describe("the main thread's tick path, nothing made per tick", () => {
  it("the frame clock re-arms one timer for its whole life: the same ticks, catch-up, skips and lateness as a timer per tick", () => {
    const perTick = new HandTime(false);
    const reused = new HandTime(true);
    const a = life(perTick);
    const b = life(reused);
    expect(perTick.schedules).toBeGreaterThan(40);
    // One timer, made with the clock, armed again and again (through a stop and a restart); no schedule() at all.
    expect(reused.made).toBe(1);
    expect(reused.schedules).toBe(0);
    expect(b.ticks).toEqual(a.ticks);
    expect(b.stats).toEqual(a.stats);
    expect(b.recent).toEqual(a.recent);
    // The semantics themselves: caught up (late ticks 1 ms apart), skipped beyond 5 owed, stopped with no timer left.
    expect(b.stats.skipped).toBeGreaterThan(20);
    expect(b.stats.latenessMaxMs).toBeGreaterThanOrEqual(55);
    expect(b.ticks.some((t, i) => i > 0 && t.at - (b.ticks[i - 1]?.at ?? 0) === 1)).toBe(true);
    expect(b.pendingAfterStop).toBe(0);
    expect(b.running).toBe(false);
    const numbers = b.ticks.map((t) => t.tick);
    expect(numbers).toEqual([...numbers].sort((x, y) => x - y));
  });

  it("Node's timer reuses one timeout per millisecond of delay, fires once per arming, and a cancelled arming never fires", async () => {
    const fired: string[] = [];
    let label = "";
    let next: () => void = () => undefined;
    const timer = new NodeTimer(() => {
      fired.push(label);
      next();
    });
    const arm = (name: string, delayMs: number) =>
      new Promise<void>((resolve) => {
        label = name;
        next = resolve;
        timer.arm(delayMs);
      });
    await arm("a", 3);
    await arm("b", 2.4); // rounded up: the 3 ms timeout again
    await arm("c", 5);
    await arm("d", 0); // at least 1 ms
    expect(fired).toEqual(["a", "b", "c", "d"]);
    expect(timer.made).toBe(3);
    // Cancelled before it fires: only the later arming fires, once.
    timer.arm(1);
    timer.cancel();
    await arm("e", 8);
    // Re-arming replaces an arming not yet fired (another delay's timeout).
    timer.arm(1);
    await arm("f", 6);
    expect(fired).toEqual(["a", "b", "c", "d", "e", "f"]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(fired).toHaveLength(6);
  });

  it("after-tick listeners run once every listener has had the tick, owed ticks too, and do not run the clock", () => {
    const time = new HandTime(true);
    const clock = new FrameClock({ time });
    const log: string[] = [];
    const stopAfter = clock.afterTick((tick) => log.push(`after ${tick}`));
    time.advanceTo(100);
    expect(clock.running).toBe(false);
    expect(log).toEqual([]);
    const stopA = clock.subscribe((tick) => {
      log.push(`a ${tick}`);
      if (tick === 1) clock.subscribe((t) => log.push(`b ${t}`)); // joins inside a tick: has it at once
    });
    time.advanceTo(140);
    time.stall(45);
    time.advanceTo(190);
    expect(log).toEqual(["a 1", "b 1", "after 1", "a 2", "b 2", "after 2", "a 3", "b 3", "after 3", "a 4", "b 4", "after 4"]);
    expect(clock.dueMs).toBe(180);
    stopAfter();
    time.advanceTo(200);
    expect(log.at(-1)).toBe("b 5");
    stopA();
  });

  it("listeners walked in joining order: one removed during a tick before its turn is not called, the rest are, and it may join again", () => {
    const time = new HandTime(true);
    const clock = new FrameClock({ time });
    const log: string[] = [];
    const listener = (name: string) => (tick: number) => void log.push(`${name} ${tick}`);
    const b = listener("b");
    let stopB: () => void = () => undefined;
    const stopA = clock.subscribe((tick) => {
      log.push(`a ${tick}`);
      if (tick === 2) stopB();
      if (tick === 3) stopB = clock.subscribe(b);
    });
    stopB = clock.subscribe(b);
    const stopC = clock.subscribe(listener("c"));
    expect(clock.listenerCount).toBe(3);
    time.advanceTo(80);
    expect(log).toEqual(["a 1", "b 1", "c 1", "a 2", "c 2", "a 3", "c 3", "b 3", "a 4", "c 4", "b 4"]);
    stopA();
    stopC();
    stopB();
    expect(clock.listenerCount).toBe(0);
    expect(clock.running).toBe(false);
  });

  it("a worker's wake word hands it the last tick asked for; asks it had no turn to take merge into the last", async () => {
    const main = new TickWake();
    const worker = new TickWake(main.buffer); // the worker's view of the same memory
    const woken: number[] = [];
    let next: () => void = () => undefined;
    const wake = () => new Promise<void>((resolve) => (next = resolve));
    worker.listen((tick) => {
      woken.push(tick);
      next();
    });
    let woke = wake();
    main.ask(3);
    await woke;
    expect(woken).toEqual([3]);
    woke = wake();
    main.ask(4);
    main.ask(5);
    await woke;
    expect(woken).toEqual([3, 5]);
    woke = wake();
    main.ask(6);
    await woke;
    expect(woken).toEqual([3, 5, 6]);
    expect(() => new TickWake(new SharedArrayBuffer(8))).toThrow(/4 bytes/);
  });
});
