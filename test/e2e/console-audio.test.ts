// The audio settings view in Chromium against the real server serving the built console: the
// fake devices are listed by name, the level meter follows Chromium's fake microphone (a beep
// every second, so the level rises and falls), the choices of microphone, speaker and ringer
// survive a reload, and the test tone plays a 440 Hz tone on the chosen output, then stops.
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, SCREENSHOTS, seriousAxeViolations, signIn, type ConsolePage } from "../helpers/console-page.js";
import { poll } from "../helpers/poll.js";

let api: TestApi;
let browser: LaunchedBrowser;
let agent: ConsolePage;

// Page-side code as text: the node project has no DOM types, and this runs only in Chromium.
const METER_LEVEL = `document.getElementById("microphone-level").value`;

/** The playing test tone: its output device and the level (dB) of `frequency` in it. */
const TONE_IN_PAGE = `async (frequency) => {
  const element = document.querySelector("audio[data-test-tone]");
  if (element === null) return null;
  const context = new AudioContext();
  await context.resume();
  const analyser = context.createAnalyser();
  analyser.fftSize = 4096;
  context.createMediaStreamSource(element.srcObject).connect(analyser);
  const bins = new Float32Array(analyser.frequencyBinCount);
  await new Promise((r) => setTimeout(r, 300));
  analyser.getFloatFrequencyData(bins);
  const at = (f) => bins[Math.round((f / context.sampleRate) * analyser.fftSize)] ?? -200;
  const result = { kind: element.dataset.testTone, sinkId: element.sinkId, paused: element.paused, tone: at(frequency), off: at(frequency * 2.5) };
  await context.close();
  return result;
}`;

interface ToneProbe {
  kind: string;
  sinkId: string;
  paused: boolean;
  tone: number;
  off: number;
}

async function openAudio(page: Page): Promise<void> {
  await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Audio" }).click();
  await page.getByRole("heading", { name: "Audio settings", level: 1 }).waitFor();
}

/** The option values of a select, by its label. */
async function optionsOf(page: Page, label: string): Promise<{ value: string; text: string }[]> {
  const options = page.getByLabel(label, { exact: true }).locator("option");
  const out: { value: string; text: string }[] = [];
  for (let i = 0; i < (await options.count()); i++) {
    out.push({ value: (await options.nth(i).getAttribute("value")) ?? "", text: await options.nth(i).innerText() });
  }
  return out;
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  browser = await launchBrowser();
  agent = await openConsole(browser.browser, api.url);
  await signIn(agent.page, "agent1");
  await openAudio(agent.page);
});

afterEach(() => {
  expect(agent?.errors ?? [], "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe("audio settings", () => {
  it("lists the microphones and outputs by name, and the meter follows the microphone", async () => {
    const { page } = agent;
    await poll("the devices listed by name", async () => ((await optionsOf(page, "Microphone")).some((o) => o.text.startsWith("Fake")) ? true : undefined));
    const microphones = await optionsOf(page, "Microphone");
    expect(microphones[0]).toEqual({ value: "", text: "System default" });
    expect(microphones.map((o) => o.text)).toContain("Fake Audio Input 1");
    const speakers = await optionsOf(page, "Speaker");
    expect(speakers.map((o) => o.text)).toContain("Fake Audio Output 1");
    expect(await optionsOf(page, "Ringer")).toEqual(speakers);

    // Chromium's fake microphone beeps once a second: over three seconds the level rises and falls.
    const levels: number[] = [];
    for (let i = 0; i < 30; i++) {
      levels.push(Number(await page.evaluate(METER_LEVEL)));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const loudest = Math.max(...levels);
    const quietest = Math.min(...levels);
    expect(loudest, `meter levels ${levels.map((l) => l.toFixed(2)).join(" ")}`).toBeGreaterThan(0.4);
    expect(loudest - quietest).toBeGreaterThan(0.2);
    expect(await page.getByRole("meter", { name: "Microphone level" }).getAttribute("aria-valuetext")).toMatch(/^\d+ percent$/);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-audio-settings.png"), fullPage: true });
  });

  it("remembers the microphone, speaker and ringer across a reload", async () => {
    const { page } = agent;
    const microphone = (await optionsOf(page, "Microphone")).find((o) => o.text === "Fake Audio Input 2");
    const speaker = (await optionsOf(page, "Speaker")).find((o) => o.text === "Fake Audio Output 2");
    const ringer = (await optionsOf(page, "Ringer")).find((o) => o.text === "Fake Audio Output 1");
    if (!microphone || !speaker || !ringer) throw new Error("Chromium's fake devices are missing");
    await page.getByLabel("Microphone", { exact: true }).selectOption(microphone.value);
    await page.getByLabel("Speaker", { exact: true }).selectOption(speaker.value);
    await page.getByLabel("Ringer", { exact: true }).selectOption(ringer.value);
    // The meter reopens on the chosen microphone and still moves.
    await poll("the meter on the new microphone", async () => (Number(await page.evaluate(METER_LEVEL)) > 0.4 ? true : undefined), 5000);

    await page.reload();
    // A reload may ask for the password again (the token is not kept); it comes back to this view.
    await page.getByRole("heading", { name: /^(Sign in to Switchboard|Audio settings)$/ }).waitFor();
    if (await page.getByRole("heading", { name: "Sign in to Switchboard" }).isVisible()) {
      await page.getByLabel("Password", { exact: true }).fill("switchboard");
      await page.getByRole("button", { name: "Sign in" }).click();
    }
    await page.getByRole("heading", { name: "Audio settings", level: 1 }).waitFor();
    expect(await page.getByLabel("Microphone", { exact: true }).inputValue()).toBe(microphone.value);
    expect(await page.getByLabel("Speaker", { exact: true }).inputValue()).toBe(speaker.value);
    expect(await page.getByLabel("Ringer", { exact: true }).inputValue()).toBe(ringer.value);
    const stored: unknown = await page.evaluate(`JSON.parse(localStorage.getItem("switchboard.audio"))`);
    expect(stored).toEqual({ microphoneId: microphone.value, speakerId: speaker.value, ringerId: ringer.value });
  });

  it("plays a test tone on the chosen speaker, and stops it by itself or on Stop", async () => {
    const { page } = agent;
    const speakerId = await page.getByLabel("Speaker", { exact: true }).inputValue();
    const ringerId = await page.getByLabel("Ringer", { exact: true }).inputValue();
    await page.getByRole("button", { name: "Play test tone on the speaker" }).click();
    await page.getByRole("status").filter({ hasText: "Playing a test tone on the speaker…" }).waitFor();
    await page.locator('audio[data-test-tone="speaker"]').waitFor({ state: "attached" });
    const tone = (await page.evaluate(`(${TONE_IN_PAGE})(440)`)) as ToneProbe | null;
    expect(tone).not.toBeNull();
    expect(tone).toMatchObject({ kind: "speaker", sinkId: speakerId, paused: false });
    expect((tone?.tone ?? -200) - (tone?.off ?? 0), "a 440 Hz tone").toBeGreaterThan(30);
    // Its three seconds over, it stops and leaves nothing playing.
    await page.getByRole("button", { name: "Play test tone on the speaker" }).waitFor({ timeout: 6000 });
    expect(await page.locator("audio[data-test-tone]").count()).toBe(0);

    await page.getByRole("button", { name: "Play test tone on the ringer" }).click();
    // The element comes with React's next render, not with the click.
    await page.locator('audio[data-test-tone="ringer"]').waitFor({ state: "attached" });
    const ring = (await page.evaluate(`(${TONE_IN_PAGE})(480)`)) as ToneProbe | null;
    expect(ring).toMatchObject({ kind: "ringer", sinkId: ringerId, paused: false });
    await page.getByRole("button", { name: "Stop tone on the ringer" }).click();
    await expect.poll(() => page.locator("audio[data-test-tone]").count()).toBe(0);
    await expect.poll(() => page.getByRole("button", { name: "Play test tone on the ringer" }).isVisible()).toBe(true);
  });
});
