// The speech cache with the real espeak-ng: a line is rendered once per (text, language, voice)
// into the data directory and read from there afterwards, even where espeak-ng is missing; stock
// phrases come from the assets whatever their spacing; the shipped phrases are small 8 kHz mono.
import { mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeWav } from "../../server/media/player.js";
import { SpeechSynthesiser, SpeechUnavailableError } from "../../server/sim/speech.js";
import { ASSETS_DIR } from "../helpers/api.js";

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sb-speech-"));
});
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe("the speech cache", () => {
  it("renders a line once, keeps it per text, language and voice, and reads it back without espeak-ng", async () => {
    const speech = new SpeechSynthesiser({ dataDir, assetsDir: ASSETS_DIR });
    const line = { text: "Could I change the address on my account?", language: "en-US" };
    const [a, b] = await Promise.all([speech.wavOf(line), speech.wavOf(line)]);
    expect(a).toBe(b);
    expect(await readdir(join(dataDir, "speech"))).toHaveLength(1);
    const rendered = await stat(a);
    expect(decodeWav(await readFile(a)).length / 8000).toBeGreaterThan(1);

    expect(await speech.wavOf({ ...line, voice: "f3" })).not.toBe(a);
    expect(await speech.wavOf({ ...line, language: "en-GB" })).not.toBe(a);
    expect(await readdir(join(dataDir, "speech"))).toHaveLength(3);

    const without = new SpeechSynthesiser({ dataDir, assetsDir: ASSETS_DIR, program: "no-such-espeak-ng" });
    expect(await without.wavOf(line)).toBe(a);
    expect((await stat(a)).mtimeMs).toBe(rendered.mtimeMs);
    await expect(without.wavOf({ ...line, text: "A line never rendered." })).rejects.toThrow(SpeechUnavailableError);
    await expect(without.wavOf({ ...line, text: "A line never rendered." })).rejects.toThrow(/no-such-espeak-ng is not installed/);
  });

  it("takes a stock phrase from the assets whatever its case, spacing and final full stop, and renders nothing", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sb-speech-"));
    try {
      const speech = new SpeechSynthesiser({ dataDir: dir, assetsDir: ASSETS_DIR, program: "no-such-espeak-ng" });
      const wav = await speech.wavOf({ text: "  can I speak to a   supervisor, please? ", language: "en-us" });
      expect(wav).toBe(join(ASSETS_DIR, "phrases", "supervisor.wav"));
      expect(await speech.wavOf({ text: "Goodbye", language: "en-US" })).toBe(join(ASSETS_DIR, "phrases", "goodbye.wav"));
      // Another voice or language is not the stock recording.
      await expect(speech.wavOf({ text: "Goodbye.", language: "en-US", voice: "f3" })).rejects.toThrow(SpeechUnavailableError);
      await expect(speech.wavOf({ text: "Goodbye.", language: "fr" })).rejects.toThrow(SpeechUnavailableError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("ships every stock phrase as 8 kHz mono audio of a second or more at most a few hundred KB in all", async () => {
    const files = (await readdir(join(ASSETS_DIR, "phrases"))).filter((f) => f.endsWith(".wav"));
    expect(files.length).toBeGreaterThanOrEqual(10);
    let bytes = 0;
    for (const file of files) {
      const data = await readFile(join(ASSETS_DIR, "phrases", file));
      bytes += data.length;
      expect(data.readUInt32LE(24), file).toBe(8000);
      expect(data.readUInt16LE(22), file).toBe(1);
      expect(decodeWav(data).length, file).toBeGreaterThan(4000);
    }
    expect(bytes).toBeLessThan(300_000);
  });
});
