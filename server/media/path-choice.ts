// Which path one direction of a forwarding pair takes (forward.ts, issue 17 "Audio latency"): on
// arrival while its packets come on time, or through a receive buffer played on the frame clock's
// ticks (the mixer path's timing) while this thread's own lateness runs high. Forwarded on arrival,
// a packet the thread got to late reaches the far end late too, and its jitter buffer raises its
// target for every later packet (session 20: ~120 ms under a busy core); re-timed onto the ticks,
// the lateness is absorbed here and the far end sees a steady stream (its target stays ~24 ms).
//
// The lateness of a packet is its arrival against its RTP timestamp, less the earliest such offset
// of the last WINDOW packets (jitter, not a steady delay). A tick's lateness is the frame clock's.
// Hysteresis: the ticks take over after ENTER late events (a packet or a tick more than 20 ms late)
// within the last WINDOW packets; arrival takes over again only after CALM packets in a row with no
// packet and no tick more than 10 ms late (a lower bar, held 3 s). The stream's first SETUP packets
// (1 s: a call's set-up comes in bursts) count no late event.

import { FRAME_MS, FRAME_SAMPLES } from "./audio-frame.js";

/** Samples per ms at G.711's 8 kHz. */
const SAMPLES_PER_MS = FRAME_SAMPLES / FRAME_MS;

export interface PathChoiceOptions {
  /** Packets over which late events are counted and the earliest offset is taken (default 50, 1 s). */
  window?: number;
  /** Late events within the window that hand the direction to the ticks (default 3). */
  enter?: number;
  /** A packet or tick later than this is a late event (default 20 ms). */
  lateMs?: number;
  /** On-time packets in a row that hand the direction back to arrival (default 150, 3 s). */
  calm?: number;
  /** A packet or tick later than this breaks the calm (default 10 ms). */
  calmMs?: number;
  /**
   * The stream's first packets, which count no late event (default 50, 1 s): a call's set-up
   * (ICE, DTLS, the far end's first frames) comes in bursts that are not this thread's lateness.
   */
  setup?: number;
}

/** An offset jump beyond this (2 s) is a new timeline (the far end restarted), not lateness. */
const NEW_TIMELINE = 2000 * SAMPLES_PER_MS;

export class PathChoice {
  readonly #window: number;
  readonly #enter: number;
  readonly #late: number;
  readonly #calm: number;
  readonly #calmLate: number;
  readonly #setup: number;
  /** Packets of the stream so far (since its timeline last changed). */
  #seen = 0;
  /** The last `window` packets' offsets (arrival in samples less the RTP timestamp, 32-bit). */
  readonly #offsets: Int32Array;
  /** Per packet of the window, whether it (or a tick before it) was a late event. */
  readonly #events: Uint8Array;
  #count = 0;
  #next = 0;
  #eventsInWindow = 0;
  /** A tick late since the last packet: joins that packet's slot of the window. */
  #tickLate = false;
  #tickCalmBroken = false;
  #calmRun = 0;
  #ticks = false;

  constructor(options: PathChoiceOptions = {}) {
    this.#window = Math.max(1, options.window ?? 50);
    this.#enter = Math.max(1, options.enter ?? 3);
    this.#late = (options.lateMs ?? 20) * SAMPLES_PER_MS;
    this.#calm = Math.max(1, options.calm ?? 150);
    this.#setup = Math.max(0, options.setup ?? 50);
    this.#calmLate = (options.calmMs ?? 10) * SAMPLES_PER_MS;
    this.#offsets = new Int32Array(this.#window);
    this.#events = new Uint8Array(this.#window);
  }

  /** Whether the direction goes through the receive buffer and the ticks (else: on arrival). */
  get ticks(): boolean {
    return this.#ticks;
  }

  /** Late events (packets and ticks) within the current window. */
  get lateEvents(): number {
    return this.#eventsInWindow;
  }

  /** A tick of the frame clock `lateMs` after its due time. */
  tick(lateMs: number): void {
    const late = lateMs * SAMPLES_PER_MS;
    if (late > this.#late) this.#tickLate = true;
    if (late > this.#calmLate) this.#tickCalmBroken = true;
  }

  /**
   * A packet of the direction arriving at `nowMs` with RTP timestamp `timestamp`; returns its
   * lateness in samples against the window's earliest offset (0 for the earliest itself).
   */
  arrival(nowMs: number, timestamp: number): number {
    const offset = (Math.round(nowMs * SAMPLES_PER_MS) - timestamp) | 0;
    let late = 0;
    const n = Math.min(this.#count, this.#window);
    for (let i = 0; i < n; i++) {
      const d = (offset - this.#offsets[i]) | 0;
      if (d > late) late = d;
    }
    if (late > NEW_TIMELINE || (n > 0 && -((offset - this.#offsets[(this.#next + this.#window - 1) % this.#window]) | 0) > NEW_TIMELINE)) {
      // A new timeline: what the window held says nothing about this stream's lateness.
      this.#count = 0;
      this.#next = 0;
      this.#events.fill(0);
      this.#eventsInWindow = 0;
      this.#seen = 0;
      late = 0;
    }
    const event = this.#seen++ >= this.#setup && (late > this.#late || this.#tickLate);
    const calmBroken = late > this.#calmLate || this.#tickCalmBroken;
    this.#tickLate = false;
    this.#tickCalmBroken = false;
    const slot = this.#next;
    this.#eventsInWindow -= this.#count >= this.#window ? this.#events[slot] : 0;
    this.#offsets[slot] = offset;
    this.#events[slot] = event ? 1 : 0;
    this.#eventsInWindow += this.#events[slot];
    this.#next = (slot + 1) % this.#window;
    this.#count++;
    this.#calmRun = calmBroken ? 0 : this.#calmRun + 1;
    if (!this.#ticks && this.#eventsInWindow >= this.#enter) {
      this.#ticks = true;
      this.#calmRun = 0;
    } else if (this.#ticks && this.#calmRun >= this.#calm) {
      this.#ticks = false;
      this.#events.fill(0);
      this.#eventsInWindow = 0;
    }
    return late;
  }
}
