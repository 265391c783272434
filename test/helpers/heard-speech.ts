// What a console page hears on its calls, as Chromium's own receive statistics say it: a sampler
// in the page reads every live peer connection's inbound audio (getStats: totalAudioEnergy and
// totalSamplesDuration, packets lost, concealed samples) about ten times a second and keeps the
// readings, so a test or bench can tell, call by call, how much speech arrived and for how long,
// and whether any of it was lost. The same measure of a WAV file gives the reference.
import type { Page } from "playwright-core";

/** One reading of one peer connection's inbound audio. */
export interface InboundReading {
  /** The peer connection's index in the page's globalThis.__peerConnections (one per call). */
  pc: number;
  /** Chromium's cumulative figures: sum of (frame peak / full scale)² × frame seconds, and seconds played out. */
  energy: number;
  duration: number;
  packetsReceived: number;
  packetsLost: number;
  concealedSamples: number;
  totalSamplesReceived: number;
  /** Samples NetEq added to slow the play-out down, and removed to speed it up. */
  insertedSamplesForDeceleration: number;
  removedSamplesForAcceleration: number;
}

// Page-side code as text: the node project has no DOM types, and this runs only in Chromium.
// Keeps reading until the page goes; a connection is read while it is connected.
const SAMPLER = `(() => {
  if (globalThis.__inboundReadings) return;
  const readings = (globalThis.__inboundReadings = []);
  let busy = false;
  setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      const pcs = globalThis.__peerConnections || [];
      for (let i = 0; i < pcs.length; i++) {
        const pc = pcs[i];
        if (pc.connectionState !== "connected") continue;
        const report = await pc.getStats().catch(() => undefined);
        report?.forEach((s) => {
          if (s.type !== "inbound-rtp" || s.kind !== "audio") return;
          readings.push({
            pc: i,
            energy: s.totalAudioEnergy || 0,
            duration: s.totalSamplesDuration || 0,
            packetsReceived: s.packetsReceived || 0,
            packetsLost: s.packetsLost || 0,
            concealedSamples: s.concealedSamples || 0,
            totalSamplesReceived: s.totalSamplesReceived || 0,
            insertedSamplesForDeceleration: s.insertedSamplesForDeceleration || 0,
            removedSamplesForAcceleration: s.removedSamplesForAcceleration || 0,
          });
        });
      }
    } finally {
      busy = false;
    }
  }, 100);
})()`;

/** Starts the page's sampler (once per page; the page must keep its peer connections, see console-page.ts). */
export async function startHearing(page: Page): Promise<void> {
  await page.evaluate(SAMPLER);
}

export async function inboundReadings(page: Page): Promise<InboundReading[]> {
  return (await page.evaluate("globalThis.__inboundReadings || []")) as InboundReading[];
}

/**
 * A 10 ms frame whose peak is above 1% of full scale (-40 dBFS) is speech: G.711 silence decodes
 * to nothing, espeak-ng's quietest voiced frames are well above it. A reading window holds speech
 * when it gained at least one such frame's energy.
 */
const SPEECH_PEAK = 0.01;
const FRAME_S = 0.01;
const SPEECH_ENERGY = SPEECH_PEAK * SPEECH_PEAK * FRAME_S;

/** Speech as heard: its energy (Chromium's units), and the seconds from its first to its last voiced window. */
export interface Speech {
  energy: number;
  spanS: number;
}

export interface HeardCall extends Speech {
  pc: number;
  /** The longest stretch between two readings, which bounds how exactly the span is known. */
  widestWindowS: number;
  packetsReceived: number;
  packetsLost: number;
  concealedSamples: number;
  totalSamplesReceived: number;
  /**
   * Seconds Chromium's jitter buffer added between the first and the last voiced window (concealment
   * of late or lost packets, slowed play-out) and took out (sped-up play-out): a loaded machine
   * stretches or shrinks the heard span by these, counted by Chromium itself.
   */
  stretchedS: number;
  shortenedS: number;
}

/** Each call's speech, from the page's readings (calls read at least twice). */
export function heardCalls(readings: readonly InboundReading[]): HeardCall[] {
  const byPc = new Map<number, InboundReading[]>();
  for (const r of readings) byPc.set(r.pc, [...(byPc.get(r.pc) ?? []), r]);
  const out: HeardCall[] = [];
  for (const [pc, rows] of byPc) {
    const first = rows[0];
    const last = rows.at(-1);
    if (!first || !last || rows.length < 2) continue;
    let start: number | undefined;
    let end: number | undefined;
    let startRow: InboundReading | undefined;
    let endRow: InboundReading | undefined;
    let widest = 0;
    for (let i = 1; i < rows.length; i++) {
      const before = rows[i - 1];
      const now = rows[i];
      if (!before || !now) continue;
      widest = Math.max(widest, now.duration - before.duration);
      if (now.energy - before.energy < SPEECH_ENERGY) continue;
      if (start === undefined) {
        start = before.duration;
        startRow = before;
      }
      end = now.duration;
      endRow = now;
    }
    // Chromium counts these in samples of its play-out rate: the readings give seconds per sample.
    const samples = last.totalSamplesReceived - first.totalSamplesReceived;
    const perSample = samples > 0 ? (last.duration - first.duration) / samples : 0;
    const within = (field: "concealedSamples" | "insertedSamplesForDeceleration" | "removedSamplesForAcceleration"): number =>
      startRow && endRow ? (endRow[field] - startRow[field]) * perSample : 0;
    out.push({
      pc,
      energy: last.energy - first.energy,
      spanS: start === undefined || end === undefined ? 0 : end - start,
      widestWindowS: widest,
      packetsReceived: last.packetsReceived - first.packetsReceived,
      packetsLost: last.packetsLost - first.packetsLost,
      concealedSamples: last.concealedSamples - first.concealedSamples,
      totalSamplesReceived: samples,
      stretchedS: within("concealedSamples") + within("insertedSamplesForDeceleration"),
      shortenedS: within("removedSamplesForAcceleration"),
    });
  }
  return out;
}

/**
 * Chromium's level of a received stream (WebRTC's AudioLevel): each 10 ms frame's peak raises a
 * held maximum; every 11th frame the level becomes that maximum, which then decays to a quarter.
 * The energy adds the level (not the frame's own peak) squared times the frame's duration.
 */
const LEVEL_UPDATE_FRAMES = 11;

/**
 * The same measure of 8 kHz samples (a decoded WAV), as Chromium's receiver counts it, with its
 * 11-frame update falling `phase` frames into the samples (a stream's phase is whatever it is).
 */
export function speechOfSamples(samples: Int16Array, phase = 0, rate = 8000): Speech {
  const frame = Math.round(rate * FRAME_S);
  let energy = 0;
  let first = -1;
  let last = -1;
  let held = 0;
  let level = 0;
  let count = (LEVEL_UPDATE_FRAMES - (phase % LEVEL_UPDATE_FRAMES)) % LEVEL_UPDATE_FRAMES;
  // The held level outlasts the samples: the tail is silence until it has decayed away.
  const frames = Math.ceil(samples.length / frame) + 4 * LEVEL_UPDATE_FRAMES;
  for (let n = 0; n < frames; n++) {
    let peak = 0;
    for (let j = n * frame; j < Math.min((n + 1) * frame, samples.length); j++) peak = Math.max(peak, Math.abs(samples[j] ?? 0));
    held = Math.max(held, peak);
    if (count++ === LEVEL_UPDATE_FRAMES - 1) {
      level = held;
      count = 0;
      held >>= 2;
    }
    const gained = (level / 32767) ** 2 * FRAME_S;
    energy += gained;
    if (gained >= SPEECH_ENERGY) {
      if (first < 0) first = n;
      last = n + 1;
    }
  }
  return { energy, spanS: first < 0 ? 0 : (last - first) * FRAME_S };
}

/** The measure at every phase of Chromium's level update: what a stream may show, lowest to highest. */
export function speechRange(samples: Int16Array): { energy: [number, number]; spanS: [number, number] } {
  const all = Array.from({ length: LEVEL_UPDATE_FRAMES }, (_, phase) => speechOfSamples(samples, phase));
  const energies = all.map((s) => s.energy);
  const spans = all.map((s) => s.spanS);
  return { energy: [Math.min(...energies), Math.max(...energies)], spanS: [Math.min(...spans), Math.max(...spans)] };
}

/** Energy as decibels against a reference energy. */
export function decibelsOf(energy: number, reference: number): number {
  return 10 * Math.log10(energy / reference);
}
