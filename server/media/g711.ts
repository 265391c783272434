// G.711 companding (ITU-T G.711): PCMU (mu-law) and PCMA (A-law) to and from 16-bit linear PCM.
// Table-driven: one 64 KiB lookup per encoder, built at its first use (30-45 ms of a start's CPU
// when built at import, and a server that plays no audio needs neither), and a 256-entry one per
// decoder, built at load.

const MULAW_BIAS = 0x84;
const MULAW_CLIP = 32635;

function ulawFromLinear(sample: number): number {
  let s = sample;
  const sign = s < 0 ? 0x80 : 0;
  if (sign) s = -s;
  if (s > MULAW_CLIP) s = MULAW_CLIP;
  s += MULAW_BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function linearFromUlaw(code: number): number {
  const u = ~code & 0xff;
  const exponent = (u >> 4) & 0x07;
  const magnitude = ((((u & 0x0f) << 3) + MULAW_BIAS) << exponent) - MULAW_BIAS;
  return u & 0x80 ? -magnitude : magnitude;
}

// A-law works on 13-bit magnitudes; these are the segment ends of that range.
const ALAW_SEGMENT_END = [0x1f, 0x3f, 0x7f, 0xff, 0x1ff, 0x3ff, 0x7ff, 0xfff];

function alawFromLinear(sample: number): number {
  let pcm = sample >> 3;
  let mask: number;
  if (pcm >= 0) mask = 0xd5;
  else {
    mask = 0x55;
    pcm = -pcm - 1;
  }
  let segment = 0;
  while (segment < 8 && pcm > ALAW_SEGMENT_END[segment]) segment++;
  if (segment >= 8) return 0x7f ^ mask;
  const mantissa = segment < 2 ? (pcm >> 1) & 0x0f : (pcm >> segment) & 0x0f;
  return ((segment << 4) | mantissa) ^ mask;
}

function linearFromAlaw(code: number): number {
  const a = code ^ 0x55;
  let t = (a & 0x0f) << 4;
  const segment = (a & 0x70) >> 4;
  if (segment === 0) t += 8;
  else t = (t + 0x108) << (segment - 1);
  return a & 0x80 ? t : -t;
}

function encoderTable(encode: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = encode(i >= 32768 ? i - 65536 : i);
  return table;
}

function decoderTable(decode: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let i = 0; i < 256; i++) table[i] = decode(i);
  return table;
}

let ulawEncoder: Uint8Array | null = null;
let alawEncoder: Uint8Array | null = null;
const ULAW_DECODE = decoderTable(linearFromUlaw);
const ALAW_DECODE = decoderTable(linearFromAlaw);

export type G711Codec = "PCMU" | "PCMA";

/** RFC 3551 static payload types. */
export const G711_PAYLOAD_TYPE: Record<G711Codec, number> = { PCMU: 0, PCMA: 8 };

export function encodeUlaw(pcm: Int16Array, out: Uint8Array = new Uint8Array(pcm.length)): Uint8Array {
  const table = (ulawEncoder ??= encoderTable(ulawFromLinear));
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i] & 0xffff];
  return out;
}

export function decodeUlaw(bytes: Uint8Array, out: Int16Array = new Int16Array(bytes.length)): Int16Array {
  for (let i = 0; i < bytes.length; i++) out[i] = ULAW_DECODE[bytes[i]];
  return out;
}

export function encodeAlaw(pcm: Int16Array, out: Uint8Array = new Uint8Array(pcm.length)): Uint8Array {
  const table = (alawEncoder ??= encoderTable(alawFromLinear));
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i] & 0xffff];
  return out;
}

export function decodeAlaw(bytes: Uint8Array, out: Int16Array = new Int16Array(bytes.length)): Int16Array {
  for (let i = 0; i < bytes.length; i++) out[i] = ALAW_DECODE[bytes[i]];
  return out;
}

export function encodeG711(codec: G711Codec, pcm: Int16Array, out?: Uint8Array): Uint8Array {
  return codec === "PCMU" ? encodeUlaw(pcm, out) : encodeAlaw(pcm, out);
}

export function decodeG711(codec: G711Codec, bytes: Uint8Array, out?: Int16Array): Int16Array {
  return codec === "PCMU" ? decodeUlaw(bytes, out) : decodeAlaw(bytes, out);
}

/** How many of the two encoder tables have been built (a start builds none: test/unit/start-g711-lazy.test.ts). */
export function encoderTablesBuilt(): number {
  return (ulawEncoder === null ? 0 : 1) + (alawEncoder === null ? 0 : 1);
}
