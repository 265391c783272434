// Audio sources a leg can play: WAV files (prompts, hold music), FreeSWITCH-style tone_stream://
// and silence_stream:// URIs. Each yields 20 ms frames of 8 kHz mono PCM on the frame clock.
//
// Supported forms:
//   /path/file.wav, file:///path/file.wav   PCM 8/16/24/32-bit, 32-bit float, A-law or mu-law WAV,
//                                           any channel count (averaged to mono), any rate
//                                           (resampled to 8 kHz once, at load)
//   tone_stream://440                       a continuous tone, forever
//   tone_stream://[v=<dBFS>;][L=<n>;]%(on_ms,off_ms,f1[,f2...])[;%(...)...][;loops=<n>]
//                                           cadenced tones; the script plays once unless loops
//                                           (or L) says how often, -1 meaning forever; v is
//                                           each frequency's level (default -13 dBFS)
//   silence_stream://[ms]                   silence for ms, forever when absent or -1

import { readFile, stat } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { FRAME_SAMPLES, SAMPLE_RATE, silentFrame, type AudioSource } from "./audio-frame.js";
import { decodeAlaw, decodeUlaw } from "./g711.js";
import { resample } from "./resample.js";
import { parseWav, WavFormatError } from "./wav.js";

export interface PlayerOptions {
  /** Start again at the end instead of ending (files and tone scripts). */
  loop?: boolean;
}

export class MediaUriError extends Error {
  override name = "MediaUriError";
}

/** Plays a buffer of 8 kHz samples, once or looping; the buffer may be shared by many players. */
export class PcmPlayer implements AudioSource {
  readonly #samples: Int16Array;
  readonly #loop: boolean;
  readonly #frame = new Int16Array(FRAME_SAMPLES);
  #position = 0;
  #ended = false;

  constructor(samples: Int16Array, options: PlayerOptions = {}) {
    this.#samples = samples;
    this.#loop = (options.loop ?? false) && samples.length > 0;
    this.#ended = samples.length === 0;
  }

  get ended(): boolean {
    return this.#ended;
  }

  read(): Int16Array {
    if (this.#ended) return silentFrame();
    const total = this.#samples.length;
    if (!this.#loop && this.#position + FRAME_SAMPLES <= total) {
      // Copied into the player's frame: a view of the shared samples would be an object per tick.
      const frame = this.#frame;
      const samples = this.#samples;
      for (let i = 0, at = this.#position; i < FRAME_SAMPLES; i++, at++) frame[i] = samples[at];
      this.#position += FRAME_SAMPLES;
      this.#ended = this.#position >= total;
      return frame;
    }
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      if (this.#position >= total) {
        if (!this.#loop) {
          this.#frame.fill(0, i);
          this.#ended = true;
          break;
        }
        this.#position = 0;
      }
      this.#frame[i] = this.#samples[this.#position++];
    }
    return this.#frame;
  }
}

/** Silence for a while or forever: a pause in a callflow, or a leg that should say nothing. */
export class SilencePlayer implements AudioSource {
  #remainingFrames: number;

  constructor(durationMs = Infinity) {
    this.#remainingFrames = Math.ceil((durationMs * SAMPLE_RATE) / 1000 / FRAME_SAMPLES);
  }

  get ended(): boolean {
    return this.#remainingFrames <= 0;
  }

  read(): Int16Array {
    if (this.#remainingFrames > 0) this.#remainingFrames--;
    return silentFrame();
  }
}

export interface ToneSegment {
  onMs: number;
  offMs: number;
  frequencies: number[];
}

export interface ToneScript {
  segments: ToneSegment[];
  /** Times the script plays; Infinity for forever. */
  loops: number;
  /** Peak amplitude of each frequency, in dBFS. */
  levelDbfs: number;
}

const DEFAULT_TONE_DBFS = -13;

/** Reads the part of a tone_stream:// URI after the scheme; throws MediaUriError on nonsense. */
export function parseToneStream(body: string): ToneScript {
  const plain = body.trim();
  if (/^\d+(\.\d+)?$/.test(plain)) {
    return { segments: [{ onMs: Infinity, offMs: 0, frequencies: [checkFrequency(Number(plain))] }], loops: 1, levelDbfs: DEFAULT_TONE_DBFS };
  }
  const script: ToneScript = { segments: [], loops: 1, levelDbfs: DEFAULT_TONE_DBFS };
  for (const raw of plain.split(";")) {
    const part = raw.trim();
    if (part === "") continue;
    const setting = /^(v|L|loops)=(-?\d+(?:\.\d+)?)$/.exec(part);
    if (setting) {
      const value = Number(setting[2]);
      if (setting[1] === "v") script.levelDbfs = Math.min(0, value);
      else script.loops = value < 0 ? Infinity : Math.max(1, Math.floor(value));
      continue;
    }
    const tone = /^%\(([^)]*)\)$/.exec(part);
    if (!tone) throw new MediaUriError(`tone_stream: cannot read "${part}" (expected %(on_ms,off_ms,freq[,freq...]))`);
    const numbers = tone[1].split(",").map((n) => Number(n.trim()));
    const [onMs, offMs, ...frequencies] = numbers;
    if (numbers.some((n) => !Number.isFinite(n) || n < 0) || frequencies.length === 0 || onMs + offMs <= 0) {
      throw new MediaUriError(`tone_stream: "${part}" needs on_ms,off_ms and at least one frequency`);
    }
    script.segments.push({ onMs, offMs, frequencies: frequencies.map(checkFrequency) });
  }
  if (script.segments.length === 0) throw new MediaUriError("tone_stream: no tone given");
  return script;
}

function checkFrequency(hz: number): number {
  if (!(hz >= 0 && hz < SAMPLE_RATE / 2)) throw new MediaUriError(`tone_stream: ${hz} Hz cannot be played at 8 kHz`);
  return hz;
}

/**
 * Generates a tone script sample by sample, so cadences are exact whatever the frame size. Each
 * frequency is a rotating phasor (two multiplies a sample instead of a sine), renormalised every
 * frame so rounding never builds up into a level drift.
 */
export class TonePlayer implements AudioSource {
  readonly #segments: { on: number; total: number; cos: Float64Array; sin: Float64Array }[];
  readonly #amplitude: number;
  readonly #frame = new Int16Array(FRAME_SAMPLES);
  #loopsLeft: number;
  #segment = 0;
  #position = 0;
  #ended = false;
  // The phasors of the current segment's frequencies: (re, im) = (cos, sin) of the phase.
  #re = new Float64Array(0);
  #im = new Float64Array(0);

  constructor(script: ToneScript, options: PlayerOptions = {}) {
    this.#segments = script.segments.map((s) => {
      const on = Math.round((s.onMs * SAMPLE_RATE) / 1000);
      const steps = s.frequencies.map((f) => (2 * Math.PI * f) / SAMPLE_RATE);
      return {
        on,
        total: on + Math.round((s.offMs * SAMPLE_RATE) / 1000),
        cos: Float64Array.from(steps, Math.cos),
        sin: Float64Array.from(steps, Math.sin),
      };
    });
    this.#amplitude = 32767 * 10 ** (script.levelDbfs / 20);
    this.#loopsLeft = options.loop ? Infinity : script.loops;
    this.#startSegment();
  }

  get ended(): boolean {
    return this.#ended;
  }

  read(): Int16Array {
    if (this.#ended) return silentFrame();
    const re = this.#re;
    const im = this.#im;
    for (let i = 0; i < FRAME_SAMPLES; i++) {
      const segment = this.#segments[this.#segment];
      if (this.#ended || segment === undefined) {
        this.#frame[i] = 0;
        continue;
      }
      let value = 0;
      if (this.#position < segment.on) {
        for (let k = 0; k < re.length; k++) {
          value += im[k];
          const r = re[k] * segment.cos[k] - im[k] * segment.sin[k];
          im[k] = re[k] * segment.sin[k] + im[k] * segment.cos[k];
          re[k] = r;
        }
      }
      this.#frame[i] = Math.max(-32768, Math.min(32767, Math.round(value * this.#amplitude)));
      if (++this.#position >= segment.total) this.#advance();
    }
    for (let k = 0; k < re.length; k++) {
      // Not Math.hypot: it takes its arguments as a list (an array per call, per tone, per tick).
      const norm = Math.sqrt(re[k] * re[k] + im[k] * im[k]);
      re[k] /= norm;
      im[k] /= norm;
    }
    return this.#frame;
  }

  #advance(): void {
    this.#position = 0;
    if (++this.#segment >= this.#segments.length) {
      this.#segment = 0;
      if (--this.#loopsLeft <= 0) this.#ended = true;
    }
    this.#startSegment();
  }

  /** Each tone burst starts at phase zero, as a tone generator restarted for it would. */
  #startSegment(): void {
    const count = this.#segments[this.#segment]?.cos.length ?? 0;
    this.#re = new Float64Array(count).fill(1);
    this.#im = new Float64Array(count);
  }
}

/** Decodes a WAV file's bytes to 8 kHz mono 16-bit samples, converting what it can. */
export function decodeWav(bytes: Buffer, name = "WAV file"): Int16Array {
  const wav = parseWav(bytes);
  const data = bytes.subarray(wav.dataOffset, wav.dataOffset + wav.dataLength);
  const described = `${name} (format ${wav.formatCode}, ${wav.bitsPerSample}-bit, ${wav.channels} channel(s), ${wav.sampleRate} Hz)`;
  if (wav.channels < 1 || wav.sampleRate < 1000) throw new WavFormatError(`${described}: not playable`);
  if (wav.formatCode === 1 && wav.bitsPerSample === 16 && wav.channels === 1 && wav.sampleRate === SAMPLE_RATE) {
    const out = new Int16Array(data.length >> 1);
    for (let i = 0; i < out.length; i++) out[i] = data.readInt16LE(i * 2);
    return out;
  }
  const mono = toMonoFloat(data, wav.formatCode, wav.bitsPerSample, wav.channels);
  if (!mono) {
    throw new WavFormatError(
      `${described}: unsupported; use integer PCM (8/16/24/32-bit), 32-bit float, A-law or mu-law, e.g. sox in.wav -r 8000 -c 1 -b 16 out.wav`,
    );
  }
  const samples = resample(mono, wav.sampleRate, SAMPLE_RATE);
  const out = new Int16Array(samples.length);
  for (let i = 0; i < out.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i])));
  return out;
}

/** Samples averaged over channels, scaled to the 16-bit range; undefined for unknown formats. */
function toMonoFloat(data: Buffer, formatCode: number, bits: number, channels: number): Float32Array | undefined {
  const readSample = sampleReader(data, formatCode, bits);
  if (!readSample) return undefined;
  const bytes = bits / 8;
  const frames = Math.floor(data.length / (bytes * channels));
  const out = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += readSample((f * channels + c) * bytes);
    out[f] = sum / channels;
  }
  return out;
}

function sampleReader(data: Buffer, formatCode: number, bits: number): ((offset: number) => number) | undefined {
  if (formatCode === 1 && bits === 8) return (o) => (data[o] - 128) * 256;
  if (formatCode === 1 && bits === 16) return (o) => data.readInt16LE(o);
  if (formatCode === 1 && bits === 24) return (o) => data.readIntLE(o, 3) / 256;
  if (formatCode === 1 && bits === 32) return (o) => data.readInt32LE(o) / 65536;
  if (formatCode === 3 && bits === 32) return (o) => data.readFloatLE(o) * 32767;
  if ((formatCode === 6 || formatCode === 7) && bits === 8) {
    const pcm = formatCode === 6 ? decodeAlaw(data) : decodeUlaw(data);
    return (o) => pcm[o];
  }
  return undefined;
}

interface CachedWav {
  mtimeMs: number;
  size: number;
  samples: Int16Array;
}

const WAV_CACHE_ENTRIES = 32;

/**
 * Loads files once per change: a hundred callers on hold share one decoded hold-music buffer.
 * Keyed by path, revalidated by mtime and size, evicting the least recently used.
 */
export class WavLibrary {
  readonly #cache = new Map<string, CachedWav>();

  async load(path: string): Promise<Int16Array> {
    const info = await stat(path);
    const hit = this.#cache.get(path);
    if (hit && hit.mtimeMs === info.mtimeMs && hit.size === info.size) {
      this.#cache.delete(path);
      this.#cache.set(path, hit);
      return hit.samples;
    }
    const samples = decodeWav(await readFile(path), path);
    this.#cache.set(path, { mtimeMs: info.mtimeMs, size: info.size, samples });
    for (const key of this.#cache.keys()) {
      if (this.#cache.size <= WAV_CACHE_ENTRIES) break;
      this.#cache.delete(key);
    }
    return samples;
  }
}

/**
 * A source for a media URI or WAV path (see the forms at the top of this file). Throws
 * MediaUriError for an unknown scheme or bad script, WavFormatError for an unplayable file.
 */
export async function createPlayer(uri: string, options: PlayerOptions = {}, library = new WavLibrary()): Promise<AudioSource> {
  const scheme = /^([a-z_]+):\/\//i.exec(uri)?.[1]?.toLowerCase();
  const body = scheme ? uri.slice(scheme.length + 3) : uri;
  switch (scheme) {
    case "tone_stream":
      return new TonePlayer(parseToneStream(body), options);
    case "silence_stream": {
      const ms = body.split(",")[0]?.trim() ?? "";
      if (ms !== "" && !/^-?\d+$/.test(ms)) throw new MediaUriError(`silence_stream: "${ms}" is not a duration in ms`);
      const duration = ms === "" || Number(ms) < 0 ? Infinity : Number(ms);
      return new SilencePlayer(duration);
    }
    case "file":
      return new PcmPlayer(await library.load(fileURLToPath(uri)), options);
    case undefined:
      return new PcmPlayer(await library.load(uri), options);
    default:
      throw new MediaUriError(`cannot play ${scheme}:// media (supported: tone_stream, silence_stream, file, a WAV path)`);
  }
}
