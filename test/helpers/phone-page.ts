// The phone lab (test/e2e/fixtures/phone-lab.ts, bundled once with Vite into a folder with an
// index.html): tests start the real server with that folder as its renderer directory, so the
// page, the /sip WebSocket and the API share the server's own loopback origin, as the console does.
import { existsSync } from "node:fs";
import { mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { build } from "vite";
import type { TestApi } from "./api.js";
import { LAB_PAGES_ENV } from "./lab-pages.js";

const bundled = new Map<string, Promise<string>>();

/** A folder holding the lab page; pass it as the server's `rendererDir`. */
export function phoneLabDir(): Promise<string> {
  return labPageDir("phone-lab");
}

/**
 * A folder holding a page around test/e2e/fixtures/<fixture>.ts, bundled once per process, and
 * once per run where the run's globalSetup gives a directory for them (test/helpers/lab-pages.ts):
 * the first file bundles the page there, the next ones take it.
 */
export function labPageDir(fixture: string): Promise<string> {
  let dir = bundled.get(fixture);
  if (dir === undefined) {
    const shared = process.env[LAB_PAGES_ENV];
    dir = shared === undefined ? bundleLabPage(fixture, tmpdir()) : sharedLabPage(fixture, shared);
    bundled.set(fixture, dir);
  }
  return dir;
}

/**
 * The run's bundle of `fixture` in `shared`: taken when there, else bundled beside it and renamed
 * into place whole (a file never sees half a bundle; if another process renamed its own first,
 * that one is taken and this one removed).
 */
async function sharedLabPage(fixture: string, shared: string): Promise<string> {
  const target = join(shared, fixture);
  if (existsSync(join(target, "index.html"))) return target;
  const made = await bundleLabPage(fixture, shared);
  try {
    await rename(made, target);
  } catch (error) {
    if (!existsSync(join(target, "index.html"))) throw error;
    await rm(made, { recursive: true, force: true });
  }
  return target;
}

/** Bundles the page around test/e2e/fixtures/<fixture>.ts into a new folder under `parent`. */
async function bundleLabPage(fixture: string, parent: string): Promise<string> {
  const outDir = await mkdtemp(join(parent, `sb-${fixture}-`));
  await build({
    configFile: false,
    logLevel: "silent",
    build: {
      outDir,
      emptyOutDir: true,
      minify: false,
      lib: { entry: join(import.meta.dirname, `../e2e/fixtures/${fixture}.ts`), formats: ["iife"], name: "Lab", fileName: () => `${fixture}.js` },
    },
  });
  // The SIP libraries' grammars hold non-ASCII characters: the page must be read as UTF-8.
  await writeFile(join(outDir, "index.html"), `<!doctype html><meta charset="utf-8"><title>${fixture}</title><script src="${fixture}.js"></script>\n`);
  return outDir;
}

export async function openPhoneLab(browser: Browser, serverUrl: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${serverUrl}/`);
  await page.waitForFunction(() => "lab" in globalThis);
  return page;
}

/** A mono 16-bit WAV of a sine tone, for --use-file-for-fake-audio-capture. */
export async function toneWav(frequency: number, seconds = 10, rate = 48000): Promise<string> {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(0.3 * 32767 * Math.sin((2 * Math.PI * frequency * i) / rate)), i * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  const path = join(await mkdtemp(join(tmpdir(), "sb-tone-")), `tone-${frequency}.wav`);
  await writeFile(path, Buffer.concat([header, data]));
  return path;
}

/** A call as the lab page reports it (renderer/phone/softphone.ts CallInfo). */
export interface LabCall {
  id: string;
  direction: string;
  state: string;
  remoteUser: string;
  remoteName: string;
}

export interface LevelSample {
  at: number;
  level: number;
}

export interface ReceiveStats {
  packetsReceived: number;
  jitterBufferMeanMs: number;
  jitterBufferTargetMeanMs: number;
  /** Chromium's running sums (seconds of delay, seconds of target, samples emitted): differences give a window's means. */
  jitterBufferDelay: number;
  jitterBufferTargetDelay: number;
  jitterBufferEmittedCount: number;
  concealedSamples: number;
  insertedSamplesForDeceleration: number;
  removedSamplesForAcceleration: number;
}

/** The jitter buffer over the samples emitted between two readings of its sums. */
export interface BufferWindow {
  /** Samples emitted in the window: none means nothing plays the stream out. */
  emitted: number;
  /** Mean time those samples waited in the buffer, ms. */
  meanMs: number;
  /** Mean target delay the buffer aimed at for them, ms. */
  targetMs: number;
}

export type BufferSums = Pick<ReceiveStats, "jitterBufferDelay" | "jitterBufferTargetDelay" | "jitterBufferEmittedCount">;

export function bufferWindow(from: BufferSums, to: BufferSums): BufferWindow {
  const emitted = to.jitterBufferEmittedCount - from.jitterBufferEmittedCount;
  return {
    emitted,
    meanMs: emitted > 0 ? ((to.jitterBufferDelay - from.jitterBufferDelay) / emitted) * 1000 : Number.NaN,
    targetMs: emitted > 0 ? ((to.jitterBufferTargetDelay - from.jitterBufferTargetDelay) / emitted) * 1000 : Number.NaN,
  };
}

/** What tests call on `globalThis.lab` inside the page (test/e2e/fixtures/phone-lab.ts). */
export interface LabWindow {
  lab: {
    start(o: unknown): Promise<void>;
    calls(): LabCall[];
    level(id: string, f: number, ms?: number): Promise<number>;
    above(id: string, f: number, reference: number, ms?: number): Promise<number>;
    trace(id: string, f: number, ms: number): Promise<LevelSample[]>;
    receiveStats(id: string): Promise<ReceiveStats | null>;
    phone(): {
      call(target: string): Promise<string>;
      answer(id: string): Promise<void>;
      hangup(id: string): Promise<void>;
      hold(id: string, held: boolean): Promise<void>;
      sendDtmf(id: string, digits: string): boolean;
      sendInfoDtmf(id: string, digit: string): Promise<void>;
      unregister(): Promise<void>;
    };
  };
}

/** Echo cancellation and gain control change levels (media notes, pitfall 9): off for measuring. */
export const MEASURING_AUDIO = { echoCancellation: false, autoGainControl: false, noiseSuppression: false };

/**
 * Starts the lab's softphone in `page` as `username`'s demo softphone device (its SIP
 * credentials read from the store) and registers it with the server.
 */
export async function startLabPhone(
  page: Page,
  api: TestApi,
  accountId: string,
  username: string,
  options: { audio?: unknown } = {},
): Promise<void> {
  const devices = (await api.server.store.account(accountId, "devices")).all();
  const sip = devices.find((d) => (d.data.sip as { username?: string } | undefined)?.username === username)?.data.sip as
    | { username: string; password: string }
    | undefined;
  if (!sip) throw new Error(`no softphone device for ${username}`);
  await page.evaluate((o) => (globalThis as unknown as LabWindow).lab.start(o), {
    server: `${api.url.replace(/^http/, "ws")}/sip`,
    username: sip.username,
    password: sip.password,
    realm: "demo.switchboard.local",
    ...(options.audio === undefined ? {} : { audio: options.audio }),
  });
}
