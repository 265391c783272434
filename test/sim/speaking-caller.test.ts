// Scripted simulated callers on a started server whose server time is a manual clock and whose
// devices are fake phones with real werift legs: a line rendered by espeak-ng is heard at the
// answering phone with the rendered WAV's energy and duration; patience runs out in a queue on the
// server's clock; digits answer the queue-login pin prompt; talk time does not count hold, and a
// caller hangs up after its hold patience; without espeak-ng a line is refused naming the
// program, unless it is a stock phrase or has a media id to play instead.
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../server/clock-control.js";
import type { BusEvent } from "../../server/events/index.js";
import { FRAME_SAMPLES, levelDbfs, MediaEngine, toneShare, type LegStats } from "../../server/media/index.js";
import { decodeWav } from "../../server/media/player.js";
import { ASSETS_DIR, startApi, type TestApi } from "../helpers/api.js";
import { connected, FakeSignalling, sleep, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";

interface Progress {
  phase: string;
  step: number;
  steps: number;
}

interface SimRow {
  id: string;
  state: string;
  script?: Progress;
}

const clock = new ManualClock(Date.now());
const media = new MediaEngine({ maxSendLatenessMs: Infinity });
const signalling = new FakeSignalling(media);
const phones = new Map<string, FakePhone>();
const events: BusEvent[] = [];
let api: TestApi;
let token: string;
let base: string;
/** The first test's rendered line, in the speech cache. */
let first = "";

beforeAll(async () => {
  api = await startApi({ clock, config: { callSignalling: signalling } });
  const login = await api.login("admin");
  token = login.token;
  base = `/v2/accounts/${login.accountId}`;
  const devices = await api.call<{ id: string; username: string }[]>("GET", `${base}/devices`, { token });
  for (const d of devices.body.data) phones.set(d.username, signalling.phone({ accountId: login.accountId, deviceId: d.id }, d.username));
  api.server.events.bus.subscribe((e) => events.push(e));
  // werift loads on a leg's first use: here, in the hook, rather than inside the first test's call.
  const warm = media.createLeg();
  await warm.createOffer();
  await warm.close();
});
// A test that failed half-way leaves no call behind for the next.
afterEach(async () => {
  const live = await api.call<SimRow[]>("GET", `${base}/sim/calls`, { token });
  for (const row of live.body.data) await api.call("POST", `${base}/sim/calls/${row.id}`, { token, data: { action: "hangup" } });
  for (const channel of api.server.calls.channels.all()) channel.hangup();
  await noChannels();
  // A queue's offer to a phone that ended with its test (the abandoning caller's) is not the next test's call.
  for (const phone of phones.values()) phone.forgetOffers();
});
afterAll(async () => {
  await api?.close();
  await media.close();
});

const customer = { caller_id_name: "Casey Customer", caller_id_number: "+14155550100" };
const simCall = (data: Record<string, unknown>) => api.call<SimRow>("POST", `${base}/sim/calls`, { token, data: { ...customer, ...data } });
const rowOf = async (id: string): Promise<SimRow | undefined> => {
  const res = await api.call<SimRow>("GET", `${base}/sim/calls/${id}`, { token });
  return res.status === 200 ? res.body.data : undefined;
};
const phaseIs = (id: string, phase: string) => poll(`the caller ${phase}`, async () => ((await rowOf(id))?.script?.phase === phase ? true : undefined));
const gone = (id: string) => poll("the caller gone", async () => ((await rowOf(id)) === undefined ? true : undefined));
const phone = (username: string): FakePhone => {
  const found = phones.get(username);
  if (!found) throw new Error(`no phone ${username}`);
  return found;
};
const mediaUp = (id: string) =>
  until(() => {
    const leg = api.server.calls.channels.get(id)?.media;
    return leg !== undefined && "state" in leg && leg.state === "connected";
  }, "the caller's media up");
/**
 * Every server leg of the call connected: the phone's side connects first, and a leg still
 * connecting when the test moves the server's clock on would meet its connect timeout.
 */
const legsUp = () =>
  until(() => {
    const legs = api.server.calls.channels.all().map((c) => c.media);
    return legs.length > 0 && legs.every((leg) => !("state" in leg) || leg.state === "connected");
  }, "the call's server legs up");
const noChannels = () => until(() => api.server.calls.channels.size === 0, "every channel to end");

/**
 * The stretch from the first to the last frame louder than -40 dBFS: its length and level. One
 * pass over the samples: it runs in the test's thread, beside the server it listens to, and a
 * slow one would stall the server's frame clock inside the next listening window.
 */
function voiced(samples: ArrayLike<number>): { ms: number; dbfs: number } {
  const all = Array.from(samples);
  const frames: number[] = [];
  for (let at = 0; at + FRAME_SAMPLES <= all.length; at += FRAME_SAMPLES) frames.push(levelDbfs(all.slice(at, at + FRAME_SAMPLES)));
  const first = frames.findIndex((level) => level > -40);
  const last = frames.findLastIndex((level) => level > -40);
  if (first < 0) return { ms: 0, dbfs: -Infinity };
  return { ms: (last - first + 1) * 20, dbfs: levelDbfs(all.slice(first * FRAME_SAMPLES, (last + 1) * FRAME_SAMPLES)) };
}

/** What took audio out of a listened stretch, counted where it happened, in frames. */
interface Losses {
  /** Delay the phone's receive buffer cut by playing a backlog faster (media/frame-fifo.ts). */
  compressed: number;
  /** Frames the phone's receive buffer dropped: full, or the test's own clock skipped their time. */
  dropped: number;
  /** Packets the phone never got, or got too late to use. */
  packets: number;
  /** Frames the server's legs did not send because their tick ran over 60 ms late (maxSendLatenessMs). */
  unsent: number;
  /**
   * Silence the phone's buffer played mid-stream beyond the server's own pauses: each read that
   * found it empty and each that waited for late audio (fifo.inserted).
   */
  inserted: number;
  /** Ticks the server's frame clock skipped after a stall: its speech paused that long, sent later. */
  serverSkipped: number;
  /**
   * The same counts at the receive buffer of the caller's channel on the server, which the bridge
   * reads once a tick for the mix the phone's leg sends: the simulated caller's packets cross the
   * loopback, so a burst of catch-up ticks after a stall reads that buffer dry before they arrive
   * (silence in the mix, sent on with no timestamp gap the phone could see), and the packets that
   * come after it are a backlog that buffer plays out or cuts.
   */
  serverInserted: number;
  serverCompressed: number;
  serverDropped: number;
  serverPackets: number;
}

type Counts = Omit<Losses, "unsent">;

/** The counters now: the phone's, the caller's channel's, and every server leg's unsent frames by channel. */
function counters(call: PhoneCall, callerChannel: string): { counts: Counts; unsent: Map<string, number> } {
  const phone = call.leg.stats();
  const fifo = phone.fifo;
  const unsent = new Map<string, number>();
  let caller: LegStats | undefined;
  for (const channel of api.server.calls.channels.all()) {
    const leg = channel.media;
    if (!("stats" in leg) || typeof leg.stats !== "function") continue;
    const stats = leg.stats();
    unsent.set(channel.id, stats.staleFramesSkipped);
    if (channel.id === callerChannel) caller = stats;
  }
  if (!caller) throw new Error(`no WebRTC leg on the caller's channel ${callerChannel}`);
  return {
    counts: {
      compressed: fifo.compressed,
      dropped: fifo.dropped,
      packets: phone.packetsLost + phone.packetsDiscarded,
      inserted: fifo.inserted ?? 0,
      serverSkipped: api.server.media.clock.stats().skipped,
      serverInserted: caller.fifo.inserted ?? 0,
      serverCompressed: caller.fifo.compressed,
      serverDropped: caller.fifo.dropped,
      serverPackets: caller.packetsLost + caller.packetsDiscarded,
    },
    unsent,
  };
}

interface Listened {
  samples: number[];
  /** What each cause took out (or, for the inserted counts and serverSkipped, put in) while listening, in frames. */
  losses: Losses;
}

/**
 * What `call`'s phone hears from now until stop() of the caller on channel `callerChannel`, and
 * what a loaded machine took out of it meanwhile, each cause counted by the part that did it:
 * speech heard is that much shorter than sent, by design (late audio is not worth hearing), and
 * no longer than sent plus the silence the receive buffers on its way had to insert.
 */
function listen(call: PhoneCall, callerChannel: string): { stop(): Listened } {
  const samples: number[] = [];
  const before = counters(call, callerChannel);
  const stop = media.clock.subscribe((tick) => samples.push(...call.leg.incoming.read(tick)));
  return {
    stop() {
      stop();
      const after = counters(call, callerChannel);
      let unsent = 0;
      for (const [id, skipped] of after.unsent) unsent += skipped - (before.unsent.get(id) ?? 0);
      const b = before.counts;
      const a = after.counts;
      return {
        samples,
        losses: {
          compressed: a.compressed - b.compressed,
          dropped: a.dropped - b.dropped,
          packets: a.packets - b.packets,
          unsent,
          inserted: a.inserted - b.inserted,
          serverSkipped: a.serverSkipped - b.serverSkipped,
          serverInserted: a.serverInserted - b.serverInserted,
          serverCompressed: a.serverCompressed - b.serverCompressed,
          serverDropped: a.serverDropped - b.serverDropped,
          serverPackets: a.serverPackets - b.serverPackets,
        },
      };
    },
  };
}

/** Frames the machine's load took out of a listened stretch. */
const framesLost = (l: Losses): number => l.compressed + l.dropped + l.packets + l.unsent + l.serverCompressed + l.serverDropped + l.serverPackets;

/** Silence put into a listened stretch by the load: the receive buffers' and the server clock's skipped ticks. */
const framesInserted = (l: Losses): number => l.inserted + l.serverInserted + l.serverSkipped;

/**
 * The heard span is the sent one, within a frame at each end, less what was counted lost while
 * listening (framesLost) and plus what was counted put in: the silence the phone's buffer
 * inserted and the ticks the server's clock skipped (its speech source waited through them): a
 * load that delays audio changes the figures it is checked against, never the verdict.
 */
function sameLength(heard: Listened, sentMs: number, what: string): void {
  const ms = voiced(heard.samples).ms;
  const told = `${what}: heard ${ms} ms, sent ${sentMs} ms, while listening ${JSON.stringify(heard.losses)} (frames)`;
  expect(ms, told).toBeGreaterThanOrEqual(sentMs - 60 - 20 * framesLost(heard.losses));
  expect(ms, told).toBeLessThanOrEqual(sentMs + 60 + 20 * framesInserted(heard.losses));
}

/** Runs `body` with a PATH on which no espeak-ng can be found. */
async function withoutEspeak<T>(body: () => Promise<T>): Promise<T> {
  const path = process.env.PATH;
  process.env.PATH = "/nonexistent";
  try {
    return await body();
  } finally {
    process.env.PATH = path;
  }
}

describe("a scripted simulated caller", () => {
  it("says its line once answered: the phone hears speech with the rendered WAV's energy and duration", async () => {
    const text = "Hello, this is a simulated caller with a question about an order.";
    const started = await simCall({ to: "1002", script: { steps: [{ wait_s: 1 }, { say: text }] } });
    expect(started.status, started.text).toBe(201);
    expect(started.body.data.script).toEqual({ phase: "calling", step: 0, steps: 2 });
    const rendered = await readdir(join(api.dataDir, "speech"));
    expect(rendered).toHaveLength(1);
    first = rendered[0] ?? "";
    const wav = decodeWav(await readFile(join(api.dataDir, "speech", rendered[0] ?? "")));

    const offered = await phone("agent1").incoming();
    await offered.answer();
    await connected(offered);
    await legsUp();
    await phaseIs(started.body.data.id, "talking");
    // The pause is on the server's clock: the line starts when the test moves it on, while listening.
    const listening = listen(offered, started.body.data.id);
    await clock.advance(1000);
    await poll("every step done", async () => ((await rowOf(started.body.data.id))?.script?.step === 2 ? true : undefined), 15_000);
    await sleep(300);
    const listened = listening.stop();
    const heard = voiced(listened.samples);
    const said = voiced(wav);
    expect(said.ms).toBeGreaterThan(2000);
    sameLength(listened, said.ms, "the line");
    expect(Math.abs(heard.dbfs - said.dbfs), `heard at ${heard.dbfs.toFixed(1)} dBFS, rendered at ${said.dbfs.toFixed(1)}`).toBeLessThan(1.5);

    offered.hangup();
    await gone(started.body.data.id);
    await noChannels();
  });

  it("abandons the queue when its patience runs out on the server's clock", async () => {
    const started = await simCall({ to: "5001", script: { patience_s: 45, steps: [{ say: "Hello?" }] } });
    expect(started.status, started.text).toBe(201);
    const id = started.body.data.id;
    await poll("the queue to answer the caller", async () => ((await rowOf(id))?.state === "answered" ? true : undefined));
    // The legs' connect timeout runs on the server's clock too: the media is up before it moves.
    await mediaUp(id);
    expect((await rowOf(id))?.script).toMatchObject({ phase: "calling", step: 0 });
    await clock.advance(44_000);
    expect((await rowOf(id))?.state).toBe("answered");
    await clock.advance(1_000);
    await gone(id);
    const abandoned = await poll("the queue's abandoned event", async () => events.find((e) => e.name === "abandoned" && e.data.call_id === id));
    expect(abandoned.data).toMatchObject({ queue_name: "Sales" });
    // The caller hung up (a BYE after the queue's answer), not the media or the queue.
    expect(events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${id}`)?.data).toMatchObject({ hangup_cause: "NORMAL_CLEARING" });
    await noChannels();
  });

  it("answers the queue-login pin prompt with its digits once it has heard the prompt", async () => {
    const users = await api.call<{ id: string; username: string }[]>("GET", `${base}/users`, { token, query: { paginate: "false" } });
    const agent3 = users.body.data.find((u) => u.username === "agent3")?.id ?? "";
    const started = await simCall({ to: "*20", script: { steps: [{ digits: "1004#" }, { wait_s: 5 }] } });
    expect(started.status, started.text).toBe(201);
    const login = await poll("agent3 logged in by the caller's pin", async () => events.find((e) => e.routing_key === `callq.recipient.${agent3}` && e.name === "login"));
    expect(login).toBeDefined();
    const channel = api.server.calls.channels.get(started.body.data.id);
    expect(channel?.state).toBe("answered");
    await poll("the digits step done", async () => ((await rowOf(started.body.data.id))?.script?.step ?? 0) >= 1 || undefined);
    await api.call("POST", `${base}/sim/calls/${started.body.data.id}`, { token, data: { action: "hangup" } });
    await noChannels();
  });

  it("keeps talking time apart from hold: it hangs up after talk_s of talk, however long the hold", async () => {
    const started = await simCall({ to: "1002", script: { talk_s: 60, steps: [] } });
    const id = started.body.data.id;
    const offered = await phone("agent1").incoming();
    await offered.answer();
    await connected(offered);
    await legsUp();
    await phaseIs(id, "talking");
    await clock.advance(30_000);
    await offered.hold();
    await phaseIs(id, "on_hold");
    await clock.advance(100_000);
    expect(offered.state).toBe("talking");
    await offered.unhold();
    await phaseIs(id, "talking");
    await clock.advance(29_000);
    expect(offered.state).toBe("talking");
    await clock.advance(1_000);
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("remote-bye");
    await noChannels();
  });

  it("says a line cut by hold again in full once resumed, and one cut by a blind transfer to the new party", async () => {
    const line = "My parcel has not arrived yet.";
    // A pause on the server's clock between the two lines: each listening stretch ends in it, so
    // what the phone heard of a line is never followed by the next one's start.
    const started = await simCall({ to: "1002", script: { steps: [{ wait_s: 1 }, { say: line }, { wait_s: 1 }, { say: line }] } });
    const id = started.body.data.id;
    const offered = await phone("agent1").incoming();
    await offered.answer();
    await connected(offered);
    await legsUp();
    await phaseIs(id, "talking");
    await clock.advance(1000);
    await sleep(400);
    await offered.hold();
    await phaseIs(id, "on_hold");
    expect((await rowOf(id))?.script?.step).toBe(1);
    const wav = voiced(decodeWav(await readFile(join(api.dataDir, "speech", (await readdir(join(api.dataDir, "speech"))).find((f) => f !== first) ?? ""))));

    let heard = listen(offered, id);
    await offered.unhold();
    await poll("the first line said", async () => ((await rowOf(id))?.script?.step === 2 ? true : undefined), 15_000);
    // The line's last frames still on their way to the phone.
    await sleep(300);
    sameLength(heard.stop(), wav.ms, "the first line said again in full");

    await clock.advance(1000);
    await poll("the second line under way", async () => ((await rowOf(id))?.script?.step === 3 ? true : undefined), 15_000);
    await sleep(400);
    const transferred = await api.call("PUT", `${base}/channels/${offered.callId}`, { token, data: { action: "transfer", target: "1003" } });
    expect(transferred.status, transferred.text).toBe(202);
    await offered.reaches("ended");
    const second = await phone("agent2").incoming();
    heard = listen(second, id);
    await second.answer();
    await poll("every step done", async () => ((await rowOf(id))?.script?.step === 4 ? true : undefined), 15_000);
    await sleep(300);
    sameLength(heard.stop(), wav.ms, "the second line said in full to the new party");
    second.hangup();
    await gone(id);
    await noChannels();
  });

  it("hangs up after its hold patience", async () => {
    const started = await simCall({ to: "1002", script: { hold_patience_s: 20, steps: [] } });
    const offered = await phone("agent1").incoming();
    await offered.answer();
    await connected(offered);
    await legsUp();
    await phaseIs(started.body.data.id, "talking");
    await offered.hold();
    await phaseIs(started.body.data.id, "on_hold");
    await clock.advance(19_000);
    expect(offered.state).toBe("talking");
    await clock.advance(1_000);
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("remote-bye");
    await noChannels();
  });
});

describe("speech without espeak-ng", () => {
  it("refuses a line it cannot synthesise, naming the program, and starts nothing", async () => {
    const res = await withoutEspeak(() => simCall({ to: "1002", script: { steps: [{ say: "A line no build has rendered before." }] } }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ message: "validation error", data: { "script.steps.0.say": { synthesis_unavailable: { value: "espeak-ng" } } } });
    const message = (res.body.data as unknown as Record<string, Record<string, { message: string }>>)["script.steps.0.say"]?.synthesis_unavailable?.message;
    expect(message).toMatch(/espeak-ng is not installed/);
    expect(api.server.calls.channels.size).toBe(0);
  });

  it("says a stock phrase from the assets, and plays a line's media instead of synthesising it", async () => {
    const before = await readdir(join(api.dataDir, "speech"));
    const res = await withoutEspeak(() =>
      simCall({
        to: "1002",
        script: { asks_for_supervisor: true, steps: [{ wait_s: 1 }, { say: "Hello?" }, { say: "Another line no build has rendered.", media: "tone_stream://%(1000,0,1200);loops=1" }] },
      }),
    );
    expect(res.status, res.text).toBe(201);
    // The supervisor line comes first, before the script's own steps.
    expect(res.body.data.script).toMatchObject({ step: 0, steps: 4 });
    expect(await readdir(join(api.dataDir, "speech"))).toEqual(before);
    const offered = await phone("agent1").incoming();
    await offered.answer();
    await connected(offered);
    await legsUp();
    await phaseIs(res.body.data.id, "talking");
    const listening = listen(offered, res.body.data.id);
    await poll("the supervisor line said", async () => ((await rowOf(res.body.data.id))?.script?.step === 1 ? true : undefined), 15_000);
    await clock.advance(1000);
    await poll("every step done", async () => ((await rowOf(res.body.data.id))?.script?.step === 4 ? true : undefined), 15_000);
    await sleep(300);
    const { samples, losses } = listening.stop();
    const stock = async (file: string) => voiced(decodeWav(await readFile(join(ASSETS_DIR, "phrases", file)))).ms;
    // After the pause, the stock "Hello?" and the tone played in place of the line: heard one after the other.
    expect(voiced(samples).ms).toBeGreaterThan((await stock("hello.wav")) + 1000 - 60 - 20 * framesLost(losses));
    let toneFrames = 0;
    for (let at = 0; at + FRAME_SAMPLES <= samples.length; at += FRAME_SAMPLES) if (toneShare(samples.slice(at, at + FRAME_SAMPLES), 1200) > 0.6) toneFrames += 1;
    // The tone is 1 s, 50 frames: all heard but an edge frame at each end and what was counted lost.
    expect(toneFrames, `tone heard in ${toneFrames} frames; while listening ${JSON.stringify(losses)} (frames)`).toBeGreaterThanOrEqual(48 - framesLost(losses));
    offered.hangup();
    await noChannels();
  });
});
