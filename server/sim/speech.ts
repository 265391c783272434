// What a simulated caller says, as WAV files the player reads: the stock phrases rendered at build
// time (assets/phrases/, scripts/render-phrases.mjs), else text rendered by espeak-ng on first use
// and kept in the data directory per (text, language, voice). espeak-ng (GPL-3) runs as a separate
// program and is never linked; the audio it outputs is not covered by its licence.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";

/** The synthesiser, found on PATH when a line is rendered. */
export const SPEECH_PROGRAM = "espeak-ng";
/** What a line is spoken in when the script does not say. */
export const DEFAULT_LANGUAGE = "en-US";
/** A render that takes longer is stuck: espeak-ng renders a sentence in a fraction of a second. */
const RENDER_TIMEOUT_MS = 20_000;

export interface SpokenLine {
  text: string;
  /** BCP 47, as espeak-ng's voice names it (en-US is its en-us). */
  language: string;
  /** An espeak-ng voice variant (f3, m2, klatt ...); absent: the language's own voice. */
  voice?: string;
}

/** espeak-ng is not installed: the line cannot be rendered. */
export class SpeechUnavailableError extends Error {
  override name = "SpeechUnavailableError";
}

/** espeak-ng refused the line (an unknown language or voice) or failed. */
export class SpeechRenderError extends Error {
  override name = "SpeechRenderError";
}

export interface SpeechOptions {
  /** The cache lives in `<dataDir>/speech/`. */
  dataDir: string;
  /** Holds phrases/phrases.json and its WAVs when the build rendered them. */
  assetsDir: string;
  /** The program to run (default espeak-ng, looked up on PATH). */
  program?: string;
}

interface StockPhrase {
  text: string;
  language: string;
  file: string;
}

/** Stock phrases match whatever the spacing and case, and a trailing full stop or not. */
function phraseKey(text: string, language: string): string {
  return `${language.toLowerCase()}\n${text.trim().replace(/\s+/g, " ").replace(/[.]$/, "").toLowerCase()}`;
}

export class SpeechSynthesiser {
  readonly #cacheDir: string;
  readonly #assetsDir: string;
  readonly #program: string;
  readonly #rendering = new Map<string, Promise<string>>();
  #stock: Promise<Map<string, string>> | undefined;

  constructor(options: SpeechOptions) {
    this.#cacheDir = join(options.dataDir, "speech");
    this.#assetsDir = options.assetsDir;
    this.#program = options.program ?? SPEECH_PROGRAM;
  }

  /**
   * The WAV file of a line: a stock phrase's when the text is one (in its language, any voice
   * variant aside), else the cached rendering, rendered now when there is none. Throws
   * SpeechUnavailableError without espeak-ng, SpeechRenderError when it refuses the line.
   */
  async wavOf(line: SpokenLine): Promise<string> {
    if (line.voice === undefined) {
      const stock = (await this.#stockPhrases()).get(phraseKey(line.text, line.language));
      if (stock !== undefined) return stock;
    }
    const key = createHash("sha256").update(JSON.stringify([line.text, line.language.toLowerCase(), line.voice ?? ""])).digest("hex");
    const path = join(this.#cacheDir, `${key}.wav`);
    const pending = this.#rendering.get(key);
    if (pending) return pending;
    const render = this.#renderOnce(line, path).finally(() => this.#rendering.delete(key));
    this.#rendering.set(key, render);
    return render;
  }

  /** True when the line was rendered before (a render is renamed into place whole). */
  async #cached(path: string): Promise<boolean> {
    try {
      return (await stat(path)).size > 0;
    } catch {
      return false;
    }
  }

  async #renderOnce(line: SpokenLine, path: string): Promise<string> {
    if (await this.#cached(path)) return path;
    await mkdir(this.#cacheDir, { recursive: true });
    // Rendered beside the cache file and renamed, so a reader never opens half a file.
    const partial = `${path}.${process.pid}.partial`;
    const voice = line.language.toLowerCase() + (line.voice === undefined ? "" : `+${line.voice}`);
    try {
      await this.#run(["-v", voice, "-w", partial, "--stdin"], line.text);
      await rename(partial, path);
    } finally {
      await rm(partial, { force: true });
    }
    return path;
  }

  /** Runs the program with the text on stdin (never as an argument, so no text reads as an option). */
  #run(args: string[], text: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.#program, args, { stdio: ["pipe", "ignore", "pipe"], timeout: RENDER_TIMEOUT_MS });
      let errors = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        if (errors.length < 2000) errors += chunk;
      });
      child.on("error", (err: NodeJS.ErrnoException) => {
        if (err.code === "ENOENT") reject(new SpeechUnavailableError(`${this.#program} is not installed (not found on PATH): install it to speak text, or use a stock phrase or a media id`));
        else reject(new SpeechRenderError(`${this.#program} could not be run: ${err.message}`));
      });
      child.on("close", (code, signal) => {
        if (code === 0) resolve();
        else reject(new SpeechRenderError(`${this.#program} failed (${signal ?? `exit ${code ?? "?"}`}): ${errors.trim() || "no message"}`));
      });
      // A program that exits before reading its input closes the pipe: its exit says why, not EPIPE.
      child.stdin.on("error", () => undefined);
      child.stdin.end(text);
    });
  }

  /** The build's stock phrases by text; none when the assets hold no manifest. */
  #stockPhrases(): Promise<Map<string, string>> {
    this.#stock ??= this.#readStock();
    return this.#stock;
  }

  async #readStock(): Promise<Map<string, string>> {
    const dir = join(this.#assetsDir, "phrases");
    const phrases = new Map<string, string>();
    let manifest: unknown;
    try {
      manifest = JSON.parse(await readFile(join(dir, "phrases.json"), "utf8"));
    } catch {
      return phrases;
    }
    const list = typeof manifest === "object" && manifest !== null && "phrases" in manifest ? manifest.phrases : undefined;
    if (!Array.isArray(list)) return phrases;
    for (const entry of list as Partial<StockPhrase>[]) {
      if (typeof entry.text !== "string" || typeof entry.language !== "string" || typeof entry.file !== "string") continue;
      // Only a plain file name in the phrases folder: the manifest cannot point elsewhere.
      if (!/^[\w-]+\.wav$/.test(entry.file)) continue;
      phrases.set(phraseKey(entry.text, entry.language), join(dir, entry.file));
    }
    return phrases;
  }
}

/** The stock phrase a caller says when it asks for a supervisor (assets/phrases/). */
export const SUPERVISOR_LINE = "Can I speak to a supervisor, please?";
