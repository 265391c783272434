// Audio latency (issue 17, "Audio latency"): how long a tone's onset takes from page A's
// microphone to page B's speaker through the server, against a direct peer connection between the
// same two pages. One Chromium (Debian's, through playwright-core, as the e2e tests launch it),
// two pages of the phone lab served by an in-process server (serve mode's startServer).
//
// Page A's "microphone" is a WebAudio oscillator gated by a gain into a MediaStreamDestination
// (getUserMedia is replaced in the page), so the onset's time is known; page B plays what it
// receives (the softphone's muted <audio> element, as a real softphone renders it) and an
// AudioWorklet on the received stream posts each onset it hears. Both are stamped with
// performance.timeOrigin + performance.now(): pages of one browser share that clock.
//
// Ours: A and B register as agent1 and agent2 (sip.js over the server's /sip WebSocket), A dials
// agent2's extension (1003), B auto-answers: the server bridges the two legs. Reference: a direct
// RTCPeerConnection between the same pages, with the same codec (PCMU, what the server's legs
// speak; BENCH_DIRECT_CODEC=opus for Chromium's default). Rounds alternate: a fresh call (or peer
// connection), BENCH_PULSES onsets 500 ms apart from the moment it is up, hang-up. "After set-up"
// is the first 3 onsets of each call (its first 1.5 s), "steady" the rest. Then the same with a
// busy child process (`for(;;)`) taking a core. BENCH_ROUNDS rounds per path and phase (default 5).
// The server's legs run in media workers, one per core as in serve mode and the app
// (BENCH_MEDIA_WORKERS=0: in the main thread). BENCH_BRIDGE_PATHS: the server's bridge paths measured,
// each a path of its own in the alternation (default "mixer,forward": receive buffers and the mix on
// the frame clock, and each packet forwarded on arrival, media/forward.ts), the engine's switch
// turned before each of its calls; "forward20" is the forward path with a tighter late rule (a
// packet more than 20 ms late against the stream's earliest not forwarded, rather than the default
// 60 ms), the engine's maxForwardLatenessMs set before each of its calls. (Session 20's runs 1-6
// had the 20 ms default as "forward" and 60 ms as "forward20".) "choose" is the forward path with each
// direction's path chosen from its lateness (path-choice.ts: the ticks through a receive buffer of
// the sending leg while late, arrival while on time), the engine's forwardPathChoice set per call.
// Per path: page B's jitter buffer (mean delay and mean target per emitted sample over each call),
// and the server legs' forwarded packets' lateness (forwardLateOver*Ms) and packets not sent.
import { spawn, type ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import type { Page } from "playwright-core";
import type { Channel } from "../server/calls/index.js";
import { defaultMediaWorkers } from "../server/config.js";
import type { LegStats, WebRtcLeg } from "../server/media/leg-api.js";
import { DEMO_ACCOUNT_NAME } from "../server/demo.js";
import { launchBrowser } from "../test/helpers/browser.js";
import { phoneLabDir } from "../test/helpers/phone-page.js";
import { poll } from "../test/helpers/poll.js";
import { startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
/** BENCH_PER_CALL=1: a line for each call through the server (its figures and its legs' lateness). */
const PER_CALL = process.env.BENCH_PER_CALL === "1";
const PULSES = Number(process.env.BENCH_PULSES ?? 16);
const DIRECT_CODEC = (process.env.BENCH_DIRECT_CODEC ?? "pcmu").toLowerCase();
const PERIOD_MS = 500;
const ON_MS = 150;
const SETUP_PULSES = 3;
const TONE_COUNT = 4;
const REALM = "demo.switchboard.local";

// The page side, as text (the bench is typed for Node, not the DOM). `probe` in each page:
// the gated tone as its microphone, an onset detector on a received stream, a bare peer connection.
const PAGE_SCRIPT = `(() => {
  const ctx = new AudioContext();
  const TONES = [500, 900, 1300, 1700];
  const osc = ctx.createOscillator();
  osc.frequency.value = TONES[0];
  const gate = ctx.createGain();
  gate.gain.value = 0;
  const mic = ctx.createMediaStreamDestination();
  osc.connect(gate);
  gate.connect(mic);
  osc.start();
  const sink = ctx.createGain();
  sink.gain.value = 0;
  sink.connect(ctx.destination);
  const now = () => performance.timeOrigin + performance.now();
  const heard = [];
  navigator.mediaDevices.getUserMedia = async () => {
    await ctx.resume();
    return new MediaStream([mic.stream.getAudioTracks()[0].clone()]);
  };
  // Arms after 50 ms under -40 dBFS (RMS of a 128-sample block), fires on a block over -26 dBFS,
  // then reads 10 ms more to tell which of the tones it was (Goertzel): onsets cycle through them,
  // so an onset heard more than a period late still pairs with its own.
  const DETECTOR = "const F = " + JSON.stringify(TONES) + "; class Onset extends AudioWorkletProcessor { constructor() { super(); this.quiet = 0; this.armed = false; this.buf = null; this.n = 0; this.since = 0; } " +
    "process(inputs) { const x = inputs[0] && inputs[0][0]; if (!x) return true; " +
    "if (this.buf) { for (let i = 0; i < x.length && this.n < this.buf.length; i++) this.buf[this.n++] = x[i]; this.since += x.length; " +
    "  if (this.n === this.buf.length) { let best = 0, bestP = -1; for (let k = 0; k < F.length; k++) { const c = 2 * Math.cos(2 * Math.PI * F[k] / sampleRate); let s1 = 0, s2 = 0; " +
    "    for (let i = 0; i < this.n; i++) { const s0 = this.buf[i] + c * s1 - s2; s2 = s1; s1 = s0; } const p = s1 * s1 + s2 * s2 - c * s1 * s2; if (p > bestP) { bestP = p; best = k; } } " +
    "    this.port.postMessage({ tone: best, lateMs: this.since / sampleRate * 1000 }); this.buf = null; } return true; } " +
    "let s = 0; for (let i = 0; i < x.length; i++) s += x[i] * x[i]; " +
    "const rms = Math.sqrt(s / x.length); if (rms < 0.01) { this.quiet += x.length; if (this.quiet >= sampleRate * 0.05) this.armed = true; } " +
    "else { this.quiet = 0; if (this.armed && rms > 0.05) { this.armed = false; this.buf = new Float32Array(Math.round(sampleRate * 0.01)); this.n = 0; this.since = x.length; " +
    "  for (let i = 0; i < x.length; i++) this.buf[this.n++] = x[i]; } } return true; } } registerProcessor('onset', Onset);";
  let loaded = null;
  let listening = null;
  const listen = async (stream) => {
    await ctx.resume();
    loaded ??= ctx.audioWorklet.addModule(URL.createObjectURL(new Blob([DETECTOR], { type: "application/javascript" })));
    await loaded;
    listening?.disconnect();
    const node = new AudioWorkletNode(ctx, "onset");
    node.port.onmessage = (e) => heard.push({ at: now() - e.data.lateMs, tone: e.data.tone });
    ctx.createMediaStreamSource(stream).connect(node);
    node.connect(sink);
    listening = node;
  };
  let pc = null;
  const gathered = (p) => new Promise((resolve) => {
    if (p.iceGatheringState === "complete") return resolve();
    p.onicegatheringstatechange = () => { if (p.iceGatheringState === "complete") resolve(); };
    setTimeout(resolve, 2000);
  });
  const preferCodec = (t, codec) => {
    const all = RTCRtpReceiver.getCapabilities("audio").codecs;
    const first = all.filter((c) => c.mimeType.toLowerCase() === "audio/" + codec);
    if (first.length) t.setCodecPreferences([...first, ...all.filter((c) => !first.includes(c))]);
  };
  globalThis.probe = {
    heard,
    async pulses(count, period, on) {
      const onsets = [];
      for (let i = 0; i < count; i++) {
        osc.frequency.value = TONES[i % TONES.length];
        gate.gain.value = 1;
        onsets.push(now());
        await new Promise((r) => setTimeout(r, on));
        gate.gain.value = 0;
        await new Promise((r) => setTimeout(r, period - on));
      }
      return onsets;
    },
    async listenToCall(callId) {
      const stream = globalThis.lab.phone().remoteStream(callId);
      if (!stream) throw new Error("no audio for " + callId);
      await listen(stream);
    },
    async offer(codec) {
      pc = new RTCPeerConnection();
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      const t = pc.addTransceiver(stream.getAudioTracks()[0], { direction: "sendrecv", streams: [stream] });
      preferCodec(t, codec);
      await pc.setLocalDescription(await pc.createOffer());
      await gathered(pc);
      return pc.localDescription.sdp;
    },
    async answer(offer) {
      pc = new RTCPeerConnection();
      let resolveTrack;
      const track = new Promise((r) => (resolveTrack = r));
      pc.ontrack = (e) => {
        const stream = e.streams[0] ?? new MediaStream([e.track]);
        // Played from the first packet on, muted, as the softphone plays a call.
        const element = new Audio();
        element.srcObject = stream;
        element.muted = true;
        void element.play().catch(() => undefined);
        resolveTrack(listen(stream));
      };
      await pc.setRemoteDescription({ type: "offer", sdp: offer });
      const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
      for (const t of pc.getTransceivers()) {
        await t.sender.replaceTrack(stream.getAudioTracks()[0]);
        t.direction = "sendrecv";
      }
      await pc.setLocalDescription(await pc.createAnswer());
      await gathered(pc);
      const sdp = pc.localDescription.sdp;
      return { sdp, ready: track };
    },
    async accept(answer) {
      await pc.setRemoteDescription({ type: "answer", sdp: answer });
    },
    connected: () => pc?.connectionState === "connected",
    async jitterMs(callId) {
      const p = callId === undefined ? pc : globalThis.lab.phone().peerConnection(callId);
      const report = await p?.getStats();
      let ms = NaN;
      report?.forEach((e) => {
        if (e.type === "inbound-rtp" && e.kind === "audio" && e.jitterBufferEmittedCount) ms = (e.jitterBufferDelay / e.jitterBufferEmittedCount) * 1000;
      });
      return ms;
    },
    async jitterTargetMs(callId) {
      const p = callId === undefined ? pc : globalThis.lab.phone().peerConnection(callId);
      const report = await p?.getStats();
      let ms = NaN;
      report?.forEach((e) => {
        if (e.type === "inbound-rtp" && e.kind === "audio" && e.jitterBufferEmittedCount) ms = (e.jitterBufferTargetDelay / e.jitterBufferEmittedCount) * 1000;
      });
      return ms;
    },
    close() {
      pc?.close();
      pc = null;
    },
  };
})()`;

/** An onset heard: when, and which of the tones (onset i plays tone i % 4). */
interface Heard {
  at: number;
  tone: number;
}
interface Probe {
  heard: Heard[];
  pulses(count: number, period: number, on: number): Promise<number[]>;
  listenToCall(callId: string): Promise<void>;
  offer(codec: string): Promise<string>;
  answer(offer: string): Promise<{ sdp: string }>;
  accept(answer: string): Promise<void>;
  connected(): boolean;
  /** Page B's mean jitter buffer delay over the call so far (Chromium's getStats), ms. */
  jitterMs(callId?: string): Promise<number>;
  /** Page B's mean jitter buffer target delay per emitted sample over the call so far, ms. */
  jitterTargetMs(callId?: string): Promise<number>;
  close(): void;
}
interface LabWindow {
  probe: Probe;
  lab: {
    start(o: unknown): Promise<void>;
    calls(): { id: string; state: string }[];
    phone(): { call(t: string): Promise<string>; hangup(id: string): Promise<void> };
  };
}

const sum = (legs: LegStats[], key: keyof LegStats): number => legs.reduce((t, s) => t + (typeof s[key] === "number" ? (s[key] as number) : 0), 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, check: () => Promise<boolean> | boolean): Promise<void> => {
  await poll(what, async () => ((await check()) ? true : undefined), 15_000, 10);
};

/**
 * Each onset's delay to the first detection of its own tone after it and before the same tone's
 * next onset: a backlog of up to 4 periods (2 s) still pairs right, a missed one does not shift the rest.
 */
function pair(onsets: number[], heard: Heard[]): (number | undefined)[] {
  return onsets.map((onset, i) => {
    const next = onsets[i + TONE_COUNT] ?? Infinity;
    const at = heard.find((h) => h.tone === i % TONE_COUNT && h.at >= onset && h.at < next)?.at;
    return at === undefined ? undefined : at - onset;
  });
}

interface Sample {
  setup: number[];
  steady: number[];
  missed: number;
  /** Page B's mean jitter buffer delay over each call. */
  jitterMs: number[];
  /** Page B's mean jitter buffer target delay over each call. */
  targetMs: number[];
  /** The server legs' figures at each call's end. */
  legs: LegStats[];
}
type BridgePath = "mixer" | "forward" | "forward20" | "choose";
const PATH_NAMES: readonly BridgePath[] = ["mixer", "forward", "forward20", "choose"];
const BRIDGE_PATHS = (process.env.BENCH_BRIDGE_PATHS ?? "mixer,forward,forward20").split(",").filter(Boolean) as BridgePath[];
for (const p of BRIDGE_PATHS) if (!PATH_NAMES.includes(p)) throw new Error(`BENCH_BRIDGE_PATHS: no path ${p}`);
interface Figures {
  server: Record<BridgePath, Sample>;
  direct: Sample;
  /** The server legs' receive FIFO figures at each call's end. */
  legs: LegStats[];
}
const sample = (): Sample => ({ setup: [], steady: [], missed: 0, jitterMs: [], targetMs: [], legs: [] });
const empty = (): Figures => ({ server: { mixer: sample(), forward: sample(), forward20: sample(), choose: sample() }, direct: sample(), legs: [] });

const WORKERS = Number(process.env.BENCH_MEDIA_WORKERS ?? defaultMediaWorkers());
const bench = await startBenchServer("audio-latency", { rendererDir: await phoneLabDir(), mediaWorkers: WORKERS });
const { server } = bench;
const browser = await launchBrowser();
let busy: ChildProcess | undefined;
try {
  const account = (await server.store.global("accounts")).all().find((a) => a.data.name === DEMO_ACCOUNT_NAME);
  if (!account) throw new Error("no demo account");
  const devices = (await server.store.account(account.id, "devices")).all();
  // The detector's worklet is a blob: the server's Content-Security-Policy (script-src 'self') would refuse it.
  const context = await browser.browser.newContext({ bypassCSP: true });
  const phone = async (username: string, autoAnswer: boolean): Promise<Page> => {
    const sip = devices.map((d) => d.data.sip as { username?: string; password?: string }).find((s) => s.username === username);
    if (!sip) throw new Error(`no device for ${username}`);
    const page = await context.newPage();
    await page.addInitScript(PAGE_SCRIPT);
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => "lab" in globalThis && "probe" in globalThis);
    await page.evaluate((o) => (globalThis as unknown as LabWindow).lab.start(o), {
      server: `${server.url.replace(/^http/, "ws")}/sip`,
      username: sip.username,
      password: sip.password,
      realm: REALM,
      audio: { echoCancellation: false, autoGainControl: false, noiseSuppression: false },
      autoAnswer,
    });
    return page;
  };
  const a = await phone("agent1", false);
  const b = await phone("agent2", true);

  const legs: Channel[] = [];
  server.calls.channels.on("added", (channel: Channel) => legs.push(channel));

  const measure = async (into: Sample): Promise<void> => {
    const heardBefore = await b.evaluate(() => (globalThis as unknown as LabWindow).probe.heard.length);
    const onsets = await a.evaluate(([n, p, on]) => (globalThis as unknown as LabWindow).probe.pulses(n, p, on), [PULSES, PERIOD_MS, ON_MS] as const);
    await sleep(1500);
    const heard = await b.evaluate((from) => (globalThis as unknown as LabWindow).probe.heard.slice(from), heardBefore);
    const delays = pair(onsets, heard);
    const heardOnly = (d: (number | undefined)[]) => d.filter((x): x is number => x !== undefined);
    into.missed += onsets.length - heardOnly(delays).length;
    into.setup.push(...heardOnly(delays.slice(0, SETUP_PULSES)));
    into.steady.push(...heardOnly(delays.slice(SETUP_PULSES)));
  };

  const throughServer = async (f: Figures, path: BridgePath): Promise<void> => {
    server.media.forwardBridge = path !== "mixer";
    server.media.maxForwardLatenessMs = path === "forward20" ? 20 : undefined;
    server.media.forwardPathChoice = path === "choose";
    legs.length = 0;
    const id = await a.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().call("1003"));
    await until("the call to be up", async () => (await a.evaluate(() => (globalThis as unknown as LabWindow).lab.calls())).some((c) => c.id === id && c.state === "active"));
    const incoming = await poll("agent2's call", async () => (await b.evaluate(() => (globalThis as unknown as LabWindow).lab.calls())).find((c) => c.state === "active"), 15_000, 10);
    await b.evaluate((callId) => (globalThis as unknown as LabWindow).probe.listenToCall(callId), incoming.id);
    const steadyBefore = f.server[path].steady.length;
    await measure(f.server[path]);
    f.server[path].jitterMs.push(await b.evaluate((callId) => (globalThis as unknown as LabWindow).probe.jitterMs(callId), incoming.id));
    f.server[path].targetMs.push(await b.evaluate((callId) => (globalThis as unknown as LabWindow).probe.jitterTargetMs(callId), incoming.id));
    for (const channel of legs) {
      if (!("stats" in channel.media)) continue;
      const stats = (channel.media as unknown as WebRtcLeg).stats();
      f.legs.push(stats);
      f.server[path].legs.push(stats);
    }
    if (PER_CALL) {
      const s = f.server[path];
      const own = s.legs.slice(-legs.length);
      const late = ["forwardLateOver10Ms", "forwardLateOver20Ms", "forwardLateOver40Ms", "staleFramesSkipped", "forwardSteps", "forwardToTicks", "ticksToForward"].map((k) => sum(own, k as keyof LegStats)).join(" / ");
      console.log(`  call (${path}): steady median ${percentile(s.steady.slice(steadyBefore), 50).toFixed(0)} ms; page B's jitter buffer ${s.jitterMs.at(-1)?.toFixed(0)} / target ${s.targetMs.at(-1)?.toFixed(0)} ms; legs' late > 10 / 20 / 40 ms / not sent / timeline steps / to ticks / back: ${late}`);
    }
    await a.evaluate((callId) => (globalThis as unknown as LabWindow).lab.phone().hangup(callId), id);
    await until("the call to end", async () => (await b.evaluate(() => (globalThis as unknown as LabWindow).lab.calls())).length === 0 && server.calls.channels.size === 0);
  };

  const direct = async (f: Figures): Promise<void> => {
    const offer = await a.evaluate((codec) => (globalThis as unknown as LabWindow).probe.offer(codec), DIRECT_CODEC);
    const { sdp } = await b.evaluate((o) => (globalThis as unknown as LabWindow).probe.answer(o).then((r) => ({ sdp: r.sdp })), offer);
    await a.evaluate((s) => (globalThis as unknown as LabWindow).probe.accept(s), sdp);
    await until("the direct connection", async () => (await a.evaluate(() => (globalThis as unknown as LabWindow).probe.connected())) && (await b.evaluate(() => (globalThis as unknown as LabWindow).probe.connected())));
    await measure(f.direct);
    f.direct.jitterMs.push(await b.evaluate(() => (globalThis as unknown as LabWindow).probe.jitterMs()));
    f.direct.targetMs.push(await b.evaluate(() => (globalThis as unknown as LabWindow).probe.jitterTargetMs()));
    await a.evaluate(() => (globalThis as unknown as LabWindow).probe.close());
    await b.evaluate(() => (globalThis as unknown as LabWindow).probe.close());
  };

  const phase = async (name: string): Promise<void> => {
    const loadBefore = loadavg()[0];
    const f = empty();
    const cpu: Record<BridgePath | "direct", number> = { mixer: 0, forward: 0, forward20: 0, choose: 0, direct: 0 };
    const paths: (BridgePath | "direct")[] = ["direct", ...BRIDGE_PATHS];
    for (let r = 0; r < ROUNDS; r++) {
      // Turn which goes first, so none always follows another.
      const order = paths.map((_, i) => paths[(i + r) % paths.length] as BridgePath | "direct");
      for (const path of order) {
        const before = process.cpuUsage();
        if (path === "direct") await direct(f);
        else await throughServer(f, path);
        const used = process.cpuUsage(before);
        cpu[path] += (used.user + used.system) / 1000;
        await sleep(300);
      }
    }
    const loadAfter = loadavg()[0];
    const ms = (v: number) => `${v.toFixed(0)} ms`;
    const row = (s: number[]) => `median ${ms(percentile(s, 50))}, p90 ${ms(percentile(s, 90))}, max ${ms(Math.max(...s))} (${s.length})`;
    const ratio = (x: number[], y: number[]) => (percentile(x, 50) / percentile(y, 50)).toFixed(2);
    const depth = f.legs.map((s) => s.jitterBufferMs);
    const fifo = f.legs.reduce((t, s) => ({ underruns: t.underruns + s.fifo.underruns, compressed: t.compressed + s.fifo.compressed, overflowed: t.overflowed + s.fifo.overflowed }), { underruns: 0, compressed: 0, overflowed: 0 });
    const serverRows = BRIDGE_PATHS.flatMap((p): [string, string][] => {
      const s = f.server[p];
      return [
        [`through the server (${p}), steady`, row(s.steady)],
        [`ratio of medians to direct, steady (${p})`, ratio(s.steady, f.direct.steady)],
        [`through the server (${p}), first ${SETUP_PULSES} onsets`, row(s.setup)],
        [`ratio of medians to direct, after set-up (${p})`, ratio(s.setup, f.direct.setup)],
        [`onsets not heard (${p})`, `${s.missed}`],
        [`page B's jitter buffer, mean delay / target per call (${p})`, `${ms(percentile(s.jitterMs, 50))} / ${ms(percentile(s.targetMs, 50))} median, max ${ms(Math.max(...s.jitterMs))} / ${ms(Math.max(...s.targetMs))}`],
        [`server legs' packets sent / not sent, late / forward timeline steps (${p})`, `${sum(s.legs, "packetsSent")} / ${sum(s.legs, "staleFramesSkipped")} / ${sum(s.legs, "forwardSteps")}`],
        [`forwarded packets later than 10 / 20 / 40 / 60 ms (${p})`, ["forwardLateOver10Ms", "forwardLateOver20Ms", "forwardLateOver40Ms", "forwardLateOver60Ms"].map((k) => sum(s.legs, k as keyof LegStats)).join(" / ")],
        ...(p === "choose" ? [[`directions moved to the ticks / back to arrival (${p})`, `${sum(s.legs, "forwardToTicks")} / ${sum(s.legs, "ticksToForward")}`] as [string, string]] : []),
        [`bench process CPU, server rounds (${p})`, `${cpu[p].toFixed(0)} ms`],
      ];
    });
    const both = BRIDGE_PATHS.includes("mixer") && BRIDGE_PATHS.includes("forward");
    const vs20 = BRIDGE_PATHS.includes("forward20") && BRIDGE_PATHS.includes("forward");
    report(`audio-latency, ${name}: tone onset page A → page B, ${ROUNDS} calls each way, ${WORKERS} media workers, ${PULSES} onsets a call; load ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}`, [
      ["direct peer-to-peer (" + DIRECT_CODEC + "), steady", row(f.direct.steady)],
      [`direct, first ${SETUP_PULSES} onsets`, row(f.direct.setup)],
      ...serverRows,
      ...(both ? [["forward / mixer, ratio of steady medians", ratio(f.server.forward.steady, f.server.mixer.steady)] as [string, string]] : []),
      ...(vs20 ? [["forward20 / forward, ratio of steady medians", ratio(f.server.forward20.steady, f.server.forward.steady)] as [string, string]] : []),
      ...(BRIDGE_PATHS.includes("choose") && BRIDGE_PATHS.includes("mixer") ? [["choose / mixer, ratio of steady medians", ratio(f.server.choose.steady, f.server.mixer.steady)] as [string, string]] : []),
      ["onsets not heard (direct)", `${f.direct.missed}`],
      ["page B's jitter buffer, mean delay / target per call (direct)", `${ms(percentile(f.direct.jitterMs, 50))} / ${ms(percentile(f.direct.targetMs, 50))} median`],
      ["server legs' receive target at hang-up (all server calls)", `${Math.min(...depth)}-${Math.max(...depth)} ms`],
      ["server legs' FIFO underruns / compressed / overflowed", `${fifo.underruns} / ${fifo.compressed} / ${fifo.overflowed}`],
      ["bench process CPU, direct rounds", `${cpu.direct.toFixed(0)} ms`],
    ]);
  };

  await phase("quiet");
  busy = spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" });
  await sleep(1000);
  await phase("a busy process taking a core");
} finally {
  busy?.kill();
  await browser.close();
  await bench.close();
}
