// Writes assets/hold-music.wav: a gentle 16-second arpeggio over four chords, synthesised here
// (so it is free of copyright), 8 kHz mono 16-bit PCM, the rate the phone legs play at.
import { writeFileSync } from "node:fs";

const RATE = 8000;
const CHORDS = [
  [261.63, 329.63, 392.0, 523.25], // C
  [220.0, 261.63, 329.63, 440.0], // Am
  [174.61, 220.0, 261.63, 349.23], // F
  [196.0, 246.94, 293.66, 392.0], // G
];
const NOTE_S = 0.5;
const BARS = 2; // each chord's arpeggio plays twice
const totalNotes = CHORDS.length * 4 * BARS;
const samples = new Float64Array(Math.round(totalNotes * NOTE_S * RATE) + RATE);

let noteIndex = 0;
for (const chord of CHORDS) {
  for (let bar = 0; bar < BARS; bar++) {
    for (const freq of chord) {
      const start = Math.round(noteIndex * NOTE_S * RATE);
      const length = Math.round(1.4 * RATE); // notes ring over each other
      for (let i = 0; i < length && start + i < samples.length; i++) {
        const t = i / RATE;
        const envelope = Math.min(1, t / 0.02) * Math.exp(-t * 2.5);
        const tone = Math.sin(2 * Math.PI * freq * t) + 0.3 * Math.sin(4 * Math.PI * freq * t);
        samples[start + i] += 0.22 * envelope * tone;
      }
      // a soft bass note under each chord's first arpeggio note
      if (freq === chord[0]) {
        for (let i = 0; i < 2 * RATE && start + i < samples.length; i++) {
          const t = i / RATE;
          samples[start + i] += 0.12 * Math.min(1, t / 0.05) * Math.exp(-t * 1.2) * Math.sin(Math.PI * freq * t);
        }
      }
      noteIndex++;
    }
  }
}

const loopLength = Math.round(totalNotes * NOTE_S * RATE);
// fold the ringing tail back onto the start so the file loops without a click
for (let i = loopLength; i < samples.length; i++) samples[i - loopLength] += samples[i];

const pcm = Buffer.alloc(loopLength * 2);
for (let i = 0; i < loopLength; i++) {
  const v = Math.max(-1, Math.min(1, samples[i]));
  pcm.writeInt16LE(Math.round(v * 32767), i * 2);
}
const header = Buffer.alloc(44);
header.write("RIFF", 0);
header.writeUInt32LE(36 + pcm.length, 4);
header.write("WAVE", 8);
header.write("fmt ", 12);
header.writeUInt32LE(16, 16);
header.writeUInt16LE(1, 20); // PCM
header.writeUInt16LE(1, 22); // mono
header.writeUInt32LE(RATE, 24);
header.writeUInt32LE(RATE * 2, 28);
header.writeUInt16LE(2, 32);
header.writeUInt16LE(16, 34);
header.write("data", 36);
header.writeUInt32LE(pcm.length, 40);
const out = new URL("../assets/hold-music.wav", import.meta.url);
writeFileSync(out, Buffer.concat([header, pcm]));
console.log(`wrote ${out.pathname}: ${(loopLength / RATE).toFixed(1)} s, ${header.length + pcm.length} bytes`);
