// The recordings view in Chromium against the real server serving the built console. Three real
// recorded calls, talking at once (simulated customers call softphones registered from pages on
// the server's origin, whose users record inbound calls from outside: one through the Sales queue
// to agent3, two straight to agent2's extension, as two lines) appear in the list; filters (caller, dates, queue) narrow it; Play streams the audio (a 206 answer to Chromium's Range request) and the position
// advances; on a slow link a seek far ahead is fetched from there by a new Range request; delete
// asks first and then removes the recording from the list and the server. The view passes axe.
// Chromium keeps the media it fetched for a URL, so playing and seeking use different recordings.
import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { CONSOLE_DIR, openConsole, SCREENSHOTS, seriousAxeViolations, signIn, type ConsolePage } from "../helpers/console-page.js";
import { phoneLabDir, startLabPhone, type LabWindow } from "../helpers/phone-page.js";
import { poll } from "../helpers/poll.js";

/**
 * Long enough that, on the throttled link below, a seek to 80% lands past what is buffered.
 * (Session 19: 14 s on a 44 KB/s link, the same 7.9 s from the first byte to 80% buffered, drew no
 * ranged request after the seek in a run at load 16-20: Chromium waited for its own download.)
 */
const LONG_CALL_MS = 20_000;
// Talk from the answer (on a busy machine the recording is a little shorter).
const SHORT_CALL_MS = 5_000;
const LONG_CALLER = "+14155550111";
const SHORT_CALLER = "+14155550122";
const QUEUE_CALLER = "+14155550133";
/** Twice the WAV's rate (8 kHz stereo 16-bit: 32 KB/s): it plays, but buffers slowly. */
const SLOW_LINK_BYTES_PER_S = 64 * 1024;

interface RecordingRow {
  id: string;
  caller_id_number: string;
  duration_ms: number;
  _read_only?: { content_types?: string[] };
}

interface AudioState {
  time: number;
  duration: number;
  paused: boolean;
  buffered: [number, number][];
}

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let admin: ConsolePage;
const recordings: Record<string, RecordingRow> = {};

const base = () => `/v2/accounts/${accountId}`;

/** A page on the server's own origin running the phone lab, so its WebSocket is same-origin. */
async function openLabOnServer(url: string): Promise<Page> {
  const page = await browser.browser.newPage();
  await page.goto(`${url}/v2/`);
  await page.addScriptTag({ content: await readFile(join(await phoneLabDir(), "phone-lab.js"), "utf8") });
  await page.waitForFunction(() => "lab" in globalThis);
  return page;
}

/** A simulated customer's call that `phone` (a lab page) has answered, and when it was answered. */
interface AnsweredCall {
  simId: string;
  callerNumber: string;
  answeredAt: number;
}

/**
 * A simulated customer calls `to` (an extension, or a queue whose Ready agent is the phone's
 * user); the lab phone on `phone` answers.
 */
async function answeredCall(phone: Page, callerNumber: string, to: string): Promise<AnsweredCall> {
  const started = await api.call<{ id: string }>("POST", `${base()}/sim/calls`, {
    token,
    data: { to, caller_id_name: "Casey Customer", caller_id_number: callerNumber, audio: "tone_stream://1200" },
  });
  expect(started.status, started.text).toBe(201);
  const labCalls = () => phone.evaluate(() => (globalThis as unknown as LabWindow).lab.calls());
  const incoming = await poll(`the call from ${callerNumber} offered`, async () => (await labCalls()).find((c) => c.state === "incoming"));
  await phone.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().answer(id), incoming.id);
  return { simId: started.body.data.id, callerNumber, answeredAt: Date.now() };
}

/** The customer hangs up once the call has talked `talkMs` since its answer; answers its recording. */
async function recordedAfter(call: AnsweredCall, talkMs: number): Promise<RecordingRow> {
  // The recording's length is real talk (the media clock is real time): this wait is what makes it.
  const left = call.answeredAt + talkMs - Date.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
  const hangup = await api.call("POST", `${base()}/sim/calls/${call.simId}`, { token, data: { action: "hangup" } });
  expect(hangup.status).toBe(202);
  // Listed once its audio is stored (the document is written just before its attachment).
  return poll(
    "the recording listed with its audio",
    async () => {
      const list = await api.call<RecordingRow[]>("GET", `${base()}/recordings`, { token, query: { filter_caller_id_number: call.callerNumber } });
      const row = list.body.data[0];
      return row?._read_only?.content_types?.includes("audio/wav") ? row : undefined;
    },
    30_000,
  );
}

// Page-side code as text: the node project has no DOM types, and this runs only in Chromium.
const AUDIO_STATE_IN_PAGE = `(() => {
  const audio = document.querySelector("audio[data-recording-id]");
  if (audio === null) throw new Error("no player in the page");
  const buffered = [];
  for (let i = 0; i < audio.buffered.length; i++) buffered.push([audio.buffered.start(i), audio.buffered.end(i)]);
  return { time: audio.currentTime, duration: audio.duration, paused: audio.paused, buffered };
})()`;

async function audioState(page: Page): Promise<AudioState> {
  return (await page.evaluate(AUDIO_STATE_IN_PAGE)) as AudioState;
}

beforeAll(async () => {
  await mkdir(SCREENSHOTS, { recursive: true });
  api = await startApi({ config: { rendererDir: CONSOLE_DIR } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();

  // The users record the calls they get from outside the account (a simulated caller is offnet).
  const users = await api.call<{ id: string; username: string }[]>("GET", `${base()}/users`, { token });
  const userId = (username: string) => users.body.data.find((u) => u.username === username)?.id ?? "";
  for (const username of ["agent2", "agent3"]) {
    const patched = await api.call("PATCH", `${base()}/users/${userId(username)}`, { token, data: { call_recording: { inbound: { offnet: { enabled: true } } } } });
    expect(patched.status, patched.text).toBe(200);
  }
  // Their softphones, each in a page of its own, opened and registered side by side.
  const [agent2Phone, agent3Phone] = await Promise.all(
    ["agent2", "agent3"].map(async (username) => {
      const page = await openLabOnServer(api.url);
      await startLabPhone(page, api, accountId, username);
      return page;
    }),
  );

  // The three calls talk at once: a call through Sales (5001), where agent3 is the one Ready
  // member, so the queue's recording names the queue; a short call straight to agent2 (1003);
  // then the long one to agent2 too, the newest (the list is newest first by the call's start),
  // which agent2's softphone answers as a second call beside the first (the lab's bare softphone
  // holds neither: both talk).
  const ready = await api.call("POST", `${base()}/callq_recipients/${userId("agent3")}`, { token, data: { action: "login_ready" } });
  expect(ready.status, ready.text).toBe(200);
  const queued = await answeredCall(agent3Phone as Page, QUEUE_CALLER, "5001");
  const short = await answeredCall(agent2Phone as Page, SHORT_CALLER, "1003");
  const long = await answeredCall(agent2Phone as Page, LONG_CALLER, "1003");
  // The admin's console opens and signs in while the calls talk; the Recordings view, which reads
  // the list, opens once the three are stored.
  const signedIn = (async () => {
    const opened = await openConsole(browser.browser, api.url);
    await signIn(opened.page, "admin");
    return opened;
  })();
  // Awaited below, after the calls: a failure meanwhile is not an unhandled rejection.
  signedIn.catch(() => undefined);
  [recordings.queued, recordings.short] = await Promise.all([recordedAfter(queued, SHORT_CALL_MS), recordedAfter(short, SHORT_CALL_MS)]);
  recordings.long = await recordedAfter(long, LONG_CALL_MS);
  admin = await signedIn;
  await admin.page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Recordings" }).click();
  await admin.page.getByRole("heading", { name: "Recordings", level: 1 }).waitFor();
}, 120_000);

afterEach(() => {
  expect(admin?.errors ?? [], "uncaught errors in the console").toEqual([]);
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
});

const rowOf = (page: Page, recording: RecordingRow) => page.locator(`tr[data-recording-id="${recording.id}"]`);

describe("the recordings view", () => {
  it("lists the recorded calls newest first with caller, callee and length, and passes axe", async () => {
    const { page } = admin;
    const long = recordings.long;
    const short = recordings.short;
    if (!long || !short) throw new Error("the calls were not recorded");
    await rowOf(page, long).waitFor();
    const rows = page.locator("tbody tr[data-recording-id]");
    expect(await rows.count()).toBe(3);
    expect(await rows.nth(0).getAttribute("data-recording-id")).toBe(long.id);
    const text = await rowOf(page, long).innerText();
    expect(text).toContain(`Casey Customer (${LONG_CALLER})`);
    expect(text).toContain("Blair Agent (1003)");
    expect(text).toContain("Inbound");
    expect(text).toMatch(new RegExp(`0:${String(Math.floor(long.duration_ms / 1000)).padStart(2, "0")}`));
    // Three recordings fit one page: there is no next page.
    expect(await page.getByRole("button", { name: "Next page" }).getAttribute("aria-disabled")).toBe("true");
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-recordings.png"), fullPage: true });
  });

  it("filters by caller number, by date and by queue, and clears the filters", async () => {
    const { page } = admin;
    const filters = page.getByRole("search", { name: "Filter recordings" });
    await filters.getByLabel("Caller number", { exact: true }).fill(SHORT_CALLER);
    const [listed] = await Promise.all([
      page.waitForResponse((r) => r.url().includes("/recordings?") && r.url().includes("filter_caller_id_number")),
      filters.getByRole("button", { name: "Apply filters" }).click(),
    ]);
    expect(new URL(listed.url()).searchParams.get("filter_caller_id_number")).toBe(SHORT_CALLER);
    await poll("only the short call listed", async () => ((await page.locator("tbody tr[data-recording-id]").count()) === 1 ? true : undefined));
    expect(await rowOf(page, recordings.short as RecordingRow).count()).toBe(1);

    // Today holds the three calls; a day long past holds none.
    await filters.getByLabel("Caller number", { exact: true }).fill("");
    await filters.getByRole("button", { name: "Today" }).click();
    await poll("the three calls of today listed", async () => ((await page.locator("tbody tr[data-recording-id]").count()) === 3 ? true : undefined));
    await filters.getByLabel("From", { exact: true }).fill("2020-01-01");
    await filters.getByLabel("To", { exact: true }).fill("2020-01-31");
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("No recordings match.").waitFor();

    // The queue filter lists the account's queues; Sales holds the call that came through it,
    // Support none.
    await filters.getByRole("button", { name: "Clear" }).click();
    const queue = filters.getByLabel("Queue", { exact: true });
    expect(await queue.locator("option").allInnerTexts()).toEqual(["All queues", "Sales", "Support"]);
    await queue.selectOption({ label: "Sales" });
    const [byQueue] = await Promise.all([
      page.waitForResponse((r) => r.url().includes("/recordings?") && r.url().includes("filter_queue_id")),
      filters.getByRole("button", { name: "Apply filters" }).click(),
    ]);
    expect(new URL(byQueue.url()).searchParams.get("filter_queue_id")).toBe(await queue.inputValue());
    await poll("only the queue's call listed", async () => ((await page.locator("tbody tr[data-recording-id]").count()) === 1 ? true : undefined));
    expect(await rowOf(page, recordings.queued as RecordingRow).count()).toBe(1);
    await queue.selectOption({ label: "Support" });
    await filters.getByRole("button", { name: "Apply filters" }).click();
    await page.getByText("No recordings match.").waitFor();

    await filters.getByRole("button", { name: "Clear" }).click();
    await poll("the three calls listed again", async () => ((await page.locator("tbody tr[data-recording-id]").count()) === 3 ? true : undefined));
    expect(await queue.inputValue()).toBe("");
    expect(await filters.getByLabel("From", { exact: true }).inputValue()).toBe("");
  });

  it("plays a recording: Chromium's Range request is answered 206 and the position advances", async () => {
    const { page } = admin;
    const short = recordings.short as RecordingRow;
    const audioRequests: Request[] = [];
    const onRequest = (request: Request) => {
      if (request.url().includes(`/recordings/${short.id}?`)) audioRequests.push(request);
    };
    page.on("request", onRequest);
    await rowOf(page, short).getByRole("button", { name: /^Play recording/ }).click();
    const player = page.getByRole("region", { name: /^Playing:/ });
    await player.waitFor();

    const first = await poll("the audio requested", async () => audioRequests[0]);
    const url = new URL(first.url());
    expect(url.searchParams.get("accept")).toBe("audio/wav");
    expect(url.searchParams.get("inline")).toBe("true");
    expect(url.searchParams.get("auth_token")).toMatch(/^[0-9a-f]{64}$/);
    expect(first.headers()["range"]).toBe("bytes=0-");
    const response = await first.response();
    expect(response?.status()).toBe(206);
    expect(response?.headers()["content-range"]).toMatch(/^bytes 0-\d+\/\d+$/);
    expect(response?.headers()["content-type"]).toBe("audio/wav");

    const moving = await poll("the position to pass half a second", async () => {
      const state = await audioState(page);
      return state.time > 0.5 ? state : undefined;
    });
    expect(moving.paused).toBe(false);
    expect(moving.duration).toBeCloseTo(short.duration_ms / 1000, 1);
    expect(await player.getByRole("slider", { name: "Position in the recording" }).getAttribute("aria-valuetext")).toMatch(/^0:0\d of 0:0\d$/);

    // Pause holds the position; Play goes on from it.
    await player.getByRole("button", { name: "Pause" }).click();
    const paused = await poll("paused", async () => {
      const state = await audioState(page);
      return state.paused ? state : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await audioState(page)).time).toBe(paused.time);
    await player.getByRole("button", { name: "Play", exact: true }).click();
    await poll("playing again", async () => ((await audioState(page)).time > paused.time ? true : undefined));
    page.off("request", onRequest);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-recordings-playing.png"), fullPage: true });
    await player.getByRole("button", { name: "Close player" }).click();
  });

  it("seeks on a slow link by asking for the bytes from the new position (Range), and plays on from there", async () => {
    const { page } = admin;
    const long = recordings.long as RecordingRow;
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 20, downloadThroughput: SLOW_LINK_BYTES_PER_S, uploadThroughput: 1024 * 1024 });
    // Chromium keeps media it fetched in its cache: a fresh fetch needs the cache out of the way.
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
    const ranges: { range: string; status: number; contentRange: string }[] = [];
    page.on("response", (res) => {
      if (!res.url().includes(`/recordings/${long.id}?`)) return;
      ranges.push({ range: res.request().headers()["range"] ?? "", status: res.status(), contentRange: res.headers()["content-range"] ?? "" });
    });
    try {
      await rowOf(page, long).getByRole("button", { name: /^Play recording/ }).click();
      await poll("playback started", async () => ((await audioState(page)).time > 0.3 ? true : undefined));
      const before = await audioState(page);
      const target = long.duration_ms / 1000 * 0.8;
      expect(before.buffered.every(([, end]) => end < target), `not yet buffered up to ${target} s: ${JSON.stringify(before.buffered)}`).toBe(true);

      // A click on the seek bar at 80% of its width, as a mouse user seeks.
      const slider = page.getByRole("slider", { name: "Position in the recording" });
      const box = await slider.boundingBox();
      if (box === null) throw new Error("the seek bar is not on screen");
      await page.mouse.click(box.x + box.width * 0.8, box.y + box.height / 2);

      const seekFetch = await poll("a ranged request from past the start", async () =>
        ranges.find((r) => /^bytes=[1-9]\d*-/.test(r.range)),
      );
      expect(seekFetch.status).toBe(206);
      const from = Number(/^bytes=(\d+)-/.exec(seekFetch.range)?.[1]);
      expect(seekFetch.contentRange).toMatch(new RegExp(`^bytes ${from}-\\d+/\\d+$`));
      const total = Number(seekFetch.contentRange.split("/")[1]);
      // The bytes asked for hold the sought position (44-byte header, 32,000 bytes a second).
      expect(from / total).toBeGreaterThan(0.6);
      expect(from / total).toBeLessThan(0.85);

      const after = await poll("playing on from the new position", async () => {
        const state = await audioState(page);
        return state.time > target - 1.5 && !state.paused ? state : undefined;
      });
      await poll("the position advancing after the seek", async () => ((await audioState(page)).time > after.time + 0.5 ? true : undefined));
      await page.getByRole("button", { name: "Close player" }).click();
    } finally {
      await cdp.send("Network.emulateNetworkConditions", { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
      await cdp.send("Network.setCacheDisabled", { cacheDisabled: false });
      await cdp.detach();
    }
  });

  it("offers the download as an attachment of the WAV", async () => {
    const { page } = admin;
    const short = recordings.short as RecordingRow;
    const link = rowOf(page, short).getByRole("link", { name: /^Download recording/ });
    const href = await link.getAttribute("href");
    expect(href).not.toBeNull();
    const url = new URL(href ?? "");
    expect(url.searchParams.get("inline")).toBe("false");
    const download = await fetch(url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-type")).toBe("audio/wav");
    expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename="call_recording_[0-9a-f]+\.wav"$/);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(bytes.subarray(0, 4).toString("ascii")).toBe("RIFF");
  });

  it("deletes only after confirmation: Cancel keeps it; Delete removes it from the list and the server", async () => {
    const { page } = admin;
    const short = recordings.short as RecordingRow;
    await rowOf(page, short).getByRole("button", { name: /^Delete recording/ }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this recording?" });
    await dialog.waitFor();
    // Focus starts on Cancel, so Enter does not delete by accident.
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Cancel");
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOTS, "console-recordings-delete.png") });
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "hidden" });
    expect((await api.call("GET", `${base()}/recordings/${short.id}`, { token })).status).toBe(200);

    await rowOf(page, short).getByRole("button", { name: /^Delete recording/ }).click();
    await dialog.getByRole("button", { name: "Delete recording" }).click();
    await dialog.waitFor({ state: "hidden" });
    await rowOf(page, short).waitFor({ state: "detached" });
    expect(await page.getByRole("status").filter({ hasText: "Recording deleted." }).count()).toBe(1);
    expect((await api.call("GET", `${base()}/recordings/${short.id}`, { token })).status).toBe(404);
    expect(await rowOf(page, recordings.long as RecordingRow).count()).toBe(1);
  });
});
