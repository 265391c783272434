// The main thread's media path reuses its frames instead of allocating per leg per tick (issues 17
// and 18: garbage collection stalled the frame clock). These tests hold the two sides of that:
// reused buffers never carry one leg's or one tick's audio into another's (each leg's audio is
// tagged with its leg and packet, and what every leg would send and every recording holds is
// checked tick by tick), and a tick allocates next to nothing (V8's sampling heap profiler,
// garbage included: bytes, not time). The clock is moved by hand.
import { Session } from "node:inspector";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FRAME_SAMPLES, silentFrame, type AudioSource } from "../../server/media/audio-frame.js";
import { FrameClock, type TimeSource } from "../../server/media/frame-clock.js";
import { FrameFifo } from "../../server/media/frame-fifo.js";
import { Mixer } from "../../server/media/mixer.js";
import { PcmPlayer } from "../../server/media/player.js";
import { ReceiveBuffer } from "../../server/media/receive-buffer.js";
import { LegMemory } from "../../server/media/worker/leg-memory.js";

/** A frame clock whose time and timer move only when told. */
function handClock() {
  let now = 0;
  let due: (() => void) | undefined;
  const time: TimeSource = {
    now: () => now,
    schedule(fn) {
      due = fn;
      return () => {
        if (due === fn) due = undefined;
      };
    },
  };
  const clock = new FrameClock({ time });
  return {
    clock,
    step(): void {
      now += clock.periodMs;
      const fn = due;
      due = undefined;
      fn?.();
    },
  };
}

/**
 * Leg `leg`'s packet `n`: every sample says whose (each leg has its own range of values, which a
 * faster read's cross-fade of that leg's audio stays inside) and which (packet and place).
 */
const tagOf = (leg: number, n: number, i: number) => leg * 5000 + ((n * 17 + i) % 4000) + 1;
const legOf = (sample: number) => (sample > 0 && (sample - 1) % 5000 < 4000 ? Math.floor((sample - 1) / 5000) : -1);

/**
 * A leg as the main thread runs it when its peer connection is in a media worker: the worker's
 * half of the shared memory (fed a packet a tick, read for what would be sent), the main
 * thread's half drained into a receive buffer at each tick, the frame it plays written back.
 */
function leg(index: number, clock: FrameClock) {
  const main = new LegMemory();
  const worker = new LegMemory(main.buffer);
  const received = worker.sink();
  const sent = worker.source();
  const buffer = new ReceiveBuffer();
  let source: AudioSource = { read: () => silentFrame(), ended: false };
  let drained = -1;
  const incoming: AudioSource = {
    read(tick) {
      if (tick !== drained) {
        drained = tick;
        main.drain(buffer);
      }
      return buffer.frameFor(tick);
    },
    ended: false,
  };
  clock.subscribe((tick) => {
    incoming.read(tick);
    main.writeOut(tick, source.read(tick));
  });
  // The worker decodes into one scratch frame, reused for every packet, as a PeerLeg does.
  const scratch = new Int16Array(FRAME_SAMPLES);
  return {
    index,
    incoming,
    play(s: AudioSource) {
      source = s;
    },
    /** The far end's packet `n` arrives. */
    arrive(n: number): void {
      for (let i = 0; i < FRAME_SAMPLES; i++) scratch[i] = tagOf(index, n, i);
      received.accept(scratch, (n * FRAME_SAMPLES) >>> 0);
    },
    /** What the worker would send for `tick`. */
    sent: (tick: number) => sent.read(tick),
  };
}

/** Sample `place` of leg `leg`'s audio as sent: packet place / FRAME_SAMPLES, sample place % FRAME_SAMPLES. */
const streamAt = (leg: number, place: number) => tagOf(leg, Math.floor(place / FRAME_SAMPLES), place % FRAME_SAMPLES);

/**
 * Where in leg `leg`'s sent audio `frame` is a contiguous run of samples starting within its
 * last eight packets up to packet `n`; undefined when it is no such run.
 */
function streamPlace(leg: number, n: number, frame: Int16Array): number | undefined {
  for (let place = n * FRAME_SAMPLES + FRAME_SAMPLES - 1; place >= Math.max(0, (n - 7) * FRAME_SAMPLES); place--) {
    if (streamAt(leg, place) !== frame[0]) continue;
    let run = true;
    for (let i = 1; i < FRAME_SAMPLES && run; i++) run = frame[i] === streamAt(leg, place + i);
    if (run) return place;
  }
  return undefined;
}

describe("reused frames on the main thread's media path", () => {
  it("never carry one leg's audio, or an earlier packet's, into another's: bridges, their taps and what each leg sends", () => {
    const { clock, step } = handClock();
    const CALLS = 3;
    const legs = Array.from({ length: CALLS * 2 }, (_, i) => leg(i, clock));
    const taps: { n: number; call: number; voice: number[]; heard: number[] }[] = [];
    let n = 0;
    /** Whose audio a frame's samples are (silence apart). */
    const owners = (frame: ArrayLike<number>): Set<number> => {
      const found = new Set<number>();
      for (let i = 0; i < FRAME_SAMPLES; i++) if (frame[i] !== 0) found.add(legOf(frame[i]));
      return found;
    };
    for (let c = 0; c < CALLS; c++) {
      const mixer = new Mixer();
      const [a, b] = [legs[2 * c], legs[2 * c + 1]];
      a.play(mixer.join(`a${c}`, a.incoming));
      b.play(mixer.join(`b${c}`, b.incoming));
      // A recorder's view: copied at once, as the recorder does.
      mixer.tap((_tick, input, output) => taps.push({ n, call: c, voice: [...(input.get(`a${c}`) ?? [])], heard: [...(output.get(`a${c}`) ?? [])] }));
    }
    const PACKETS = 200;
    const last = new Map<number, number>();
    let checked = 0;
    let whole = 0;
    for (; n < PACKETS; n++) {
      // A burst now and then (two packets in one tick, none in the next), so the receive
      // buffers' backlogs are cut by faster reads, whose output frames are reused too.
      if (n % 40 === 10) continue;
      for (const l of legs) {
        l.arrive(n);
        if (n % 40 === 11) l.arrive(n + 1000);
      }
      step();
      const tick = clock.tick;
      for (const l of legs) {
        const other = legs[l.index ^ 1];
        const out = l.sent(tick);
        // What leg l sends is what its call's other leg received: that leg's packets only.
        const from = owners(out);
        if (from.size > 0) expect([...from], `leg ${l.index} at tick ${tick}`).toEqual([other.index]);
        // Outside the ticks where a faster read cuts, a frame is a run of the other leg's samples
        // as they were sent (one packet's, or the end of one and the start of the next once a
        // cut moved the frames off the packets' edges), and the runs come out in order.
        if (n > 60 && out[0] !== 0) {
          checked++;
          const at = streamPlace(other.index, n, out);
          if (at !== undefined) {
            whole++;
            expect(at, `leg ${l.index}: audio in order`).toBeGreaterThan(last.get(l.index) ?? -1);
            last.set(l.index, at);
          }
        }
      }
    }
    expect(whole / checked).toBeGreaterThan(0.7);
    expect(last.size).toBe(legs.length);
    // Each recording saw its own call: leg a's voice left, what a heard (leg b's voice) right.
    const late = taps.filter((t) => t.n > 60);
    expect(late.length).toBeGreaterThan(100);
    for (const t of late) {
      n = t.n;
      expect([...owners(t.voice)], `call ${t.call}'s voice at packet ${t.n}`).toEqual([2 * t.call]);
      expect([...owners(t.heard)], `what call ${t.call}'s leg a heard at packet ${t.n}`).toEqual([2 * t.call + 1]);
    }
  });

  it("a faster read never writes into a frame the reader holds, nor hands out one still queued", () => {
    const fifo = new FrameFifo({ capacity: 20, prime: 2, trimAfterPops: 1 });
    let n = 0;
    const next = () => {
      const frame = new Int16Array(FRAME_SAMPLES);
      // A tone (so faster reads find a period to cut) whose level tells the frames apart.
      for (let i = 0; i < FRAME_SAMPLES; i++) frame[i] = Math.round((1000 + n) * Math.sin((2 * Math.PI * (n * FRAME_SAMPLES + i)) / 40));
      n++;
      return frame;
    };
    const queued = new Set<Int16Array>();
    const push = (frame: Int16Array) => {
      queued.add(frame);
      fifo.push(frame);
    };
    for (let i = 0; i < 10; i++) push(next());
    let faster = 0;
    for (let t = 0; t < 200; t++) {
      const compressed = fifo.stats.compressed;
      const frame = fifo.pop();
      queued.delete(frame);
      if (frame === silentFrame()) continue;
      const held = [...frame];
      // The reader's frame is not one the FIFO still holds...
      expect(queued.has(frame)).toBe(false);
      // ...and stays as it was while packets arrive during its tick.
      push(next());
      if (t % 7 === 0) push(next());
      expect([...frame]).toEqual(held);
      if (fifo.stats.compressed > compressed) faster++;
    }
    expect(faster).toBeGreaterThan(3);
  });
});

describe("a tick's allocations on the main thread's media path", () => {
  const inspector = new Session();
  const post = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => inspector.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  interface Node {
    selfSize: number;
    children: Node[];
  }
  const sizeOf = (node: Node): number => node.children.reduce((sum, child) => sum + sizeOf(child), node.selfSize);

  beforeAll(async () => {
    inspector.connect();
    await post("HeapProfiler.enable");
  });
  afterAll(() => inspector.disconnect());

  it("bridged calls, hold music and spoken lines: a few bytes per leg per tick, not an object per frame", async () => {
    const { clock, step } = handClock();
    const legs: ReturnType<typeof leg>[] = [];
    const music = new Int16Array(8000 * 5).map((_, i) => Math.round(8000 * Math.sin(i / 7)));
    for (let c = 0; c < 10; c++) {
      const [a, b] = [leg(legs.length, clock), leg(legs.length + 1, clock)];
      const mixer = new Mixer();
      a.play(mixer.join("a", a.incoming));
      b.play(mixer.join("b", b.incoming));
      const waiting = leg(legs.length + 2, clock);
      waiting.play(new PcmPlayer(music, { loop: true }));
      const saying = leg(legs.length + 3, clock);
      saying.play(new PcmPlayer(new Int16Array(8000 * 60).fill(5)));
      legs.push(a, b, waiting, saying);
    }
    let packet = 0;
    const run = (ticks: number) => {
      for (let t = 0; t < ticks; t++) {
        for (const l of legs) l.arrive(packet);
        packet++;
        step();
      }
    };
    run(500); // compiled, buffers primed
    await post("HeapProfiler.startSampling", { samplingInterval: 64, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    const TICKS = 500;
    run(TICKS);
    const { profile } = (await post("HeapProfiler.stopSampling")) as { profile: { head: Node } };
    const perLegTick = sizeOf(profile.head) / (TICKS * legs.length);
    // Before the frames were reused: 447 bytes per leg per tick (bench/media-frames.ts). What
    // is left is the timestamps handed to the receive buffers (numbers past 2^31) and the clock's timer.
    expect(perLegTick).toBeLessThan(40);
  });
});
