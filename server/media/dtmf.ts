// RFC 4733 telephone-events for DTMF: reading digits out of incoming event packets (each digit
// once, however many end packets repeat it) and producing the packet train that sends one.

const DIGITS = "0123456789*#ABCD";
const END_BIT = 0x80;

export interface TelephoneEvent {
  /** Event code: 0-9, 10 = *, 11 = #, 12-15 = A-D (RFC 4733 §3.2). */
  event: number;
  end: boolean;
  /** Power level in -dBm0 (0..63). */
  volume: number;
  /** Duration so far, in timestamp units (8 kHz samples). */
  duration: number;
}

export function parseTelephoneEvent(payload: Uint8Array): TelephoneEvent | undefined {
  if (payload.length < 4) return undefined;
  return {
    event: payload[0],
    end: (payload[1] & END_BIT) !== 0,
    volume: payload[1] & 0x3f,
    duration: (payload[2] << 8) | payload[3],
  };
}

export function buildTelephoneEvent(e: TelephoneEvent): Buffer {
  const payload = Buffer.alloc(4);
  payload[0] = e.event;
  payload[1] = (e.end ? END_BIT : 0) | (e.volume & 0x3f);
  payload.writeUInt16BE(Math.min(0xffff, e.duration), 2);
  return payload;
}

export function digitToEvent(digit: string): number {
  const event = DIGITS.indexOf(digit.toUpperCase());
  if (event < 0 || digit.length !== 1) throw new RangeError(`not a DTMF digit: ${JSON.stringify(digit)}`);
  return event;
}

export function eventToDigit(event: number): string | undefined {
  return event >= 0 && event < DIGITS.length ? DIGITS[event] : undefined;
}

export interface DtmfDigit {
  digit: string;
  durationMs: number;
}

/**
 * Turns a stream of telephone-event packets into digits. One event keeps one RTP timestamp for
 * all its packets and its end packet is sent three times (RFC 4733 §2.5.1.4), so a digit is
 * reported at its first end packet and later packets with that timestamp are ignored.
 */
export class DtmfDetector {
  // A few recent timestamps: enough for the retransmitted end packets of the last events.
  readonly #ended: number[] = [];

  /** The digit an event packet completes, or undefined (not an end, a repeat, or not a digit). */
  accept(timestamp: number, payload: Uint8Array): DtmfDigit | undefined {
    const event = parseTelephoneEvent(payload);
    if (!event?.end || this.#ended.includes(timestamp)) return undefined;
    this.#ended.push(timestamp);
    if (this.#ended.length > 8) this.#ended.shift();
    const digit = eventToDigit(event.event);
    return digit === undefined ? undefined : { digit, durationMs: event.duration / 8 };
  }
}

/** One RTP packet of an outgoing event, for the tick that sends it. */
export interface DtmfPacket {
  payload: Buffer;
  /** The event's first packet: the sender sets the marker bit and fixes the event timestamp. */
  start: boolean;
}

export interface DtmfSendOptions {
  /** How long each digit sounds (default 100 ms). */
  durationMs?: number;
  /** Quiet time between digits (default 60 ms). */
  gapMs?: number;
  /** Power level in -dBm0 (default 10). */
  volume?: number;
}

interface QueuedDigit {
  event: number;
  ticks: number;
  gapTicks: number;
  volume: number;
  done?: () => void;
}

const END_REPEATS = 3;

/**
 * Queues digits and yields, one tick at a time, what the leg sends: event packets while a digit
 * plays (audio is paused then, as RFC 4733 §2.5.1.1 expects), "gap" between digits, nothing
 * when idle. Frames are 20 ms, so durations round to whole ticks.
 */
export class DtmfSender {
  readonly #queue: QueuedDigit[] = [];
  readonly #frameMs: number;
  #current: QueuedDigit | undefined;
  #step = 0;

  constructor(frameMs = 20) {
    this.#frameMs = frameMs;
  }

  get busy(): boolean {
    return this.#current !== undefined || this.#queue.length > 0;
  }

  /** Resolves once every digit has been sent (or dropped by `cancel`). */
  enqueue(digits: string, options: DtmfSendOptions = {}): Promise<void> {
    const events = [...digits].map(digitToEvent);
    const ticks = Math.max(2, Math.round((options.durationMs ?? 100) / this.#frameMs));
    const gapTicks = Math.max(1, Math.round((options.gapMs ?? 60) / this.#frameMs));
    return new Promise((resolve) => {
      if (events.length === 0) return resolve();
      events.forEach((event, i) =>
        this.#queue.push({ event, ticks, gapTicks, volume: options.volume ?? 10, done: i === events.length - 1 ? resolve : undefined }),
      );
    });
  }

  /** Drops queued digits (the leg is closing); pending promises still resolve. */
  cancel(): void {
    for (const d of [this.#current, ...this.#queue]) d?.done?.();
    this.#queue.length = 0;
    this.#current = undefined;
  }

  next(): DtmfPacket | "gap" | undefined {
    if (!this.#current) {
      this.#current = this.#queue.shift();
      this.#step = 0;
      if (!this.#current) return undefined;
    }
    const d = this.#current;
    const step = this.#step++;
    const samplesPerTick = this.#frameMs * 8;
    if (step < d.ticks) {
      return {
        payload: buildTelephoneEvent({ event: d.event, end: false, volume: d.volume, duration: (step + 1) * samplesPerTick }),
        start: step === 0,
      };
    }
    if (step < d.ticks + END_REPEATS) {
      return {
        payload: buildTelephoneEvent({ event: d.event, end: true, volume: d.volume, duration: d.ticks * samplesPerTick }),
        start: false,
      };
    }
    if (step + 1 >= d.ticks + END_REPEATS + d.gapTicks) {
      this.#current = undefined;
      d.done?.();
    }
    return "gap";
  }
}
