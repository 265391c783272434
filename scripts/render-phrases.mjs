// Renders the simulated callers' stock phrases into assets/phrases/ with espeak-ng, so a packaged
// app on a machine without espeak-ng still has voices. espeak-ng (GPL-3) runs as a separate
// program; the audio it outputs is not covered by its licence, so the WAVs ship freely.
// Each phrase is stored as 8 kHz mono mu-law (8 KB a second, what the phone legs play); the
// manifest phrases.json maps each text to its file, and the server reads it (server/sim/speech.ts).
// Without espeak-ng the script says so and leaves the committed files as they are.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const OUT = fileURLToPath(new URL("../assets/phrases/", import.meta.url));
const LANGUAGE = "en-US";
const RATE = 8000;

/** What callers say most: greetings, reasons for calling, answers, asking for a supervisor, goodbyes. */
const PHRASES = [
  ["hello", "Hello?"],
  ["hi-order", "Hi, I'm calling about my order."],
  ["bill", "I have a question about my bill."],
  ["waiting", "I've been waiting for a long time."],
  ["supervisor", "Can I speak to a supervisor, please?"],
  ["yes", "Yes."],
  ["no", "No."],
  ["repeat", "Sorry, could you repeat that?"],
  ["account", "My account number is four two four two."],
  ["hold", "Okay, I'll hold."],
  ["thanks", "Thank you, that's all I needed."],
  ["goodbye", "Goodbye."],
];

if (spawnSync("espeak-ng", ["--version"]).error) {
  console.log("render-phrases: espeak-ng is not installed; keeping the committed assets/phrases/");
  process.exit(0);
}

mkdirSync(OUT, { recursive: true });
const work = mkdtempSync(join(tmpdir(), "phrases-"));
const manifest = [];
try {
  for (const [name, text] of PHRASES) {
    const raw = join(work, `${name}.wav`);
    execFileSync("espeak-ng", ["-v", LANGUAGE.toLowerCase(), "-w", raw, "--stdin"], { input: text });
    const { rate, samples } = readPcm16(readFileSync(raw));
    const pcm = resample(samples, rate, RATE);
    writeFileSync(join(OUT, `${name}.wav`), ulawWav(pcm));
    manifest.push({ text, language: LANGUAGE, file: `${name}.wav` });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
writeFileSync(join(OUT, "phrases.json"), `${JSON.stringify({ synthesiser: "espeak-ng", phrases: manifest }, null, 2)}\n`);
console.log(`render-phrases: ${manifest.length} phrases in ${OUT}`);

/** espeak-ng writes 16-bit mono PCM; the rate is read from the header. */
function readPcm16(bytes) {
  let offset = 12;
  let rate = 0;
  while (offset + 8 <= bytes.length) {
    const id = bytes.toString("ascii", offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === "fmt ") rate = bytes.readUInt32LE(offset + 12);
    if (id === "data") {
      // espeak-ng streaming to a file may leave the size unset: read to the end then.
      const end = size === 0 || size === 0xffffffff ? bytes.length : Math.min(bytes.length, offset + 8 + size);
      const samples = new Float64Array((end - offset - 8) >> 1);
      for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(offset + 8 + i * 2);
      return { rate, samples };
    }
    offset += 8 + size + (size & 1);
  }
  throw new Error("no data chunk in espeak-ng's output");
}

/** A windowed-sinc low-pass below the new Nyquist frequency, then interpolation at the new rate. */
function resample(samples, from, to) {
  const cutoff = (0.45 * to) / from;
  const half = 32;
  const out = new Float64Array(Math.floor((samples.length * to) / from));
  for (let n = 0; n < out.length; n++) {
    const centre = (n * from) / to;
    const first = Math.ceil(centre - half);
    let sum = 0;
    for (let k = first; k <= centre + half; k++) {
      if (k < 0 || k >= samples.length) continue;
      const x = k - centre;
      const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
      const window = 0.5 + 0.5 * Math.cos((Math.PI * x) / half);
      sum += samples[k] * sinc * window;
    }
    out[n] = sum;
  }
  return out;
}

/** G.711 mu-law of one 16-bit sample. */
function ulaw(sample) {
  const BIAS = 0x84;
  let s = Math.max(-32635, Math.min(32635, Math.round(sample)));
  const sign = s < 0 ? 0x80 : 0;
  if (s < 0) s = -s;
  s += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (s & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (s >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

function ulawWav(samples) {
  const data = Buffer.alloc(samples.length);
  for (let i = 0; i < samples.length; i++) data[i] = ulaw(samples[i]);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "ascii");
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8, "ascii");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(7, 20); // mu-law
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(RATE, 24);
  header.writeUInt32LE(RATE, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write("data", 36, "ascii");
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}
