// Call queue with media (issue 6): the real server (startServer, demo account) in this process, its
// queue Sales (5001) with 20 more agents whose phones run in a second process (as in production,
// browsers and desk phones elsewhere): scripted SIP over WebSocket (test/helpers/sip-client.ts)
// plus a werift leg each, answering the server's INVITE and playing a tone back. Simulated callers
// (POST /sim/calls) are a product feature and live in the server process by design, so their
// legs count in the server's figures; a point with bare legs like theirs shows their share.
//
// Points, each a measured window of the server process (CPU of all its threads as a share of one
// core, main event-loop delay p50/p99/max, frame clock lateness, frames lost from leg stats):
//   idle   23 agents registered, logged out, no calls
//   legs   50 bare server legs to far ends in the phones process, tone and hold music: the cost of
//          the 50 simulated callers' own legs without the queue
//   a      50 simulated callers waiting in Sales, hearing its hold music, no agent logged in
//   b      20 agents Ready: 20 of those callers bridged (audio both ways), and 20 SIP callers from
//          the phones process join, so 50 wait and 20 talk (70 callers; the API allows 50
//          simulated callers per account)
//   c      as b, with the 20 bridged calls recorded (new calls: the first 20 hung up, the next
//          20 bridged to agents whose users now ask for call_recording, 20 new simulated callers)
//
// BENCH_CALLQ_MEDIA_SECONDS: measured window (default 10); BENCH_CALLQ_MEDIA_RUNS: runs (default 1).
import { fork, type ChildProcess } from "node:child_process";
import { readdir } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { DEMO_ACCOUNT_NAME } from "../server/demo.js";
import type { RunningServer } from "../server/index.js";
import { MediaEngine, type LegStats, type WebRtcLeg } from "../server/media/index.js";
import { ASSETS_DIR, credentials, DEMO_PASSWORD } from "../test/helpers/api.js";
import { poll } from "../test/helpers/poll.js";
import { hex, PhoneCall, responseTo, SipPhone, SipSocket, tagOf, type SipMessage } from "../test/helpers/sip-client.js";
import { startBenchServer } from "./lib/server.js";
import { report } from "./report.js";

const SECONDS = Number(process.env.BENCH_CALLQ_MEDIA_SECONDS ?? 10);
const RUNS = Number(process.env.BENCH_CALLQ_MEDIA_RUNS ?? 1);
/** The server's media worker threads, as `--media-workers` sets them (serve mode: one per core). */
const SERVER_WORKERS = Number(process.env.BENCH_CALLQ_MEDIA_WORKERS ?? 0);
const AGENTS = 20;
const WAITING = 50;
const SIM_LIMIT = 50;
const REALM = "demo.switchboard.local";
const HOLD_MUSIC = join(ASSETS_DIR, "hold-music.wav");
const CALLER_TONE = "tone_stream://440";
const AGENT_TONE = "tone_stream://1000";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const until = async (what: string, check: () => Promise<boolean> | boolean, ms = 60_000): Promise<void> => {
  await poll(what, async () => ((await check()) ? true : undefined), ms, 100);
};

async function connected(legs: WebRtcLeg[]): Promise<void> {
  await until(`${legs.length} legs connected`, () => {
    const down = legs.find((l) => l.state === "closed");
    if (down) throw new Error(`leg ${down.id} closed while connecting: ${down.closeReason ?? "?"}`);
    return legs.every((l) => l.state === "connected");
  }, 30_000);
}

/** The counters summed over legs, between two snapshots (legs present in both). */
interface Counters {
  legs: number;
  sent: number;
  received: number;
  /** Sequence gaps at the receivers. */
  lost: number;
  /** Frames the receive FIFOs dropped (full, clock skipped, worker ring full) or found missing when due. */
  dropped: number;
  underruns: number;
  /** Frames not sent because their tick ran more than 60 ms late. */
  stale: number;
}

type LegRow = [id: string, group: string, stats: LegStats];

function counters(before: LegRow[], after: LegRow[], group?: string): Counters {
  const first = new Map(before.map(([id, , s]) => [id, s]));
  const total: Counters = { legs: 0, sent: 0, received: 0, lost: 0, dropped: 0, underruns: 0, stale: 0 };
  for (const [id, g, s1] of after) {
    const s0 = first.get(id);
    if (!s0 || (group !== undefined && g !== group)) continue;
    total.legs += 1;
    total.sent += s1.packetsSent - s0.packetsSent;
    total.received += s1.packetsReceived - s0.packetsReceived;
    total.lost += s1.packetsLost - s0.packetsLost;
    total.dropped += s1.fifo.dropped - s0.fifo.dropped;
    total.underruns += s1.fifo.underruns - s0.fifo.underruns;
    total.stale += s1.staleFramesSkipped - s0.staleFramesSkipped;
  }
  return total;
}

const rowsOf = (legs: Iterable<WebRtcLeg>, group: (leg: WebRtcLeg) => string): LegRow[] =>
  [...legs].filter((l) => l.state === "connected").map((l) => [l.id, group(l), structuredClone(l.stats())]);

// ---- the phones process --------------------------------------------------------------------

interface Credentials {
  username: string;
  password: string;
}

type Request =
  | { op: "agents"; url: string; agents: Credentials[] }
  | { op: "callers"; url: string; device: Credentials; to: string; count: number }
  | { op: "answer"; offers: { id: string; sdp: string }[] }
  | { op: "drop-bare" }
  | { op: "stats" }
  | { op: "close" };
type Reply =
  | { op: "agents"; registered: number }
  | { op: "callers"; answered: number }
  | { op: "answer"; answers: { id: string; sdp: string }[] }
  | { op: "drop-bare" }
  | { op: "stats"; legs: LegRow[]; micros: number }
  | { op: "error"; message: string };

/** The parent's handle on the phones process: each request numbered, its reply matched by number. */
class Phones {
  readonly #child: ChildProcess;
  readonly #waiting = new Map<number, (reply: Reply) => void>();
  #seq = 0;

  constructor() {
    this.#child = fork(fileURLToPath(import.meta.url), [], {
      execArgv: ["--import", "tsx"],
      env: { ...process.env, BENCH_CALLQ_MEDIA_ROLE: "phones" },
    });
    this.#child.on("message", (message: { seq: number; reply: Reply }) => {
      if (message.reply.op === "error") {
        process.stderr.write(`phones process: ${message.reply.message}\n`);
        return;
      }
      this.#waiting.get(message.seq)?.(message.reply);
      this.#waiting.delete(message.seq);
    });
  }

  ask<K extends Reply["op"]>(request: Request & { op: K }): Promise<Extract<Reply, { op: K }>> {
    const seq = ++this.#seq;
    return new Promise((resolve) => {
      this.#waiting.set(seq, (reply) => resolve(reply as Extract<Reply, { op: K }>));
      this.#child.send({ seq, request });
    });
  }

  async close(): Promise<void> {
    const exited = new Promise((resolve) => this.#child.once("exit", resolve));
    this.#child.send({ seq: 0, request: { op: "close" } satisfies Request });
    await exited;
  }
}

/** The child's side: agents' and callers' phones, and far ends for bare server legs. */
function servePhones(): void {
  const engine = new MediaEngine();
  const legs = new Map<string, { group: string; leg: WebRtcLeg }>();
  const sockets: SipSocket[] = [];
  let closing = false;
  const reply = (seq: number, answer: Reply) => process.send?.({ seq, reply: answer });
  const fail = (error: unknown) => reply(0, { op: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });

  const newLeg = async (id: string, group: string, audio: string): Promise<WebRtcLeg> => {
    const leg = engine.createLeg({ id });
    legs.set(id, { group, leg });
    leg.on("state", (change) => {
      if (change.from === "negotiating" && change.to === "closed") process.stderr.write(`phones: leg ${id} failed to connect: ${leg.closeReason ?? "?"}\n`);
      if (change.to === "closed") legs.delete(id);
    });
    leg.play(await engine.player(audio));
    return leg;
  };

  /** Answers what the server sends a phone: INVITE (a new call or a re-INVITE), BYE, CANCEL, the rest 200. */
  const serveSocket = async (socket: SipSocket, phone: SipPhone, name: string): Promise<void> => {
    const byCall = new Map<string, WebRtcLeg>();
    let calls = 0;
    for (;;) {
      let m: SipMessage;
      try {
        m = await socket.next(600_000);
      } catch (error) {
        if (closing || socket.closed) return;
        if (error instanceof Error && error.message === "no SIP message arrived in time") continue;
        throw error;
      }
      if (!m.method || m.method === "ACK") continue;
      const callId = m.header("call-id") ?? "";
      if (m.method === "INVITE") {
        const existing = byCall.get(callId);
        const toTag = tagOf(m.header("to") ?? "") ?? hex(4);
        if (existing) {
          socket.send(responseTo(m, 200, { toTag, contact: phone.contact, body: await existing.acceptOffer(m.body) }));
          continue;
        }
        calls += 1;
        const leg = await newLeg(`${name}-${calls}`, "agent", AGENT_TONE);
        byCall.set(callId, leg);
        socket.send(responseTo(m, 180, { toTag, contact: phone.contact }));
        socket.send(responseTo(m, 200, { toTag, contact: phone.contact, body: await leg.acceptOffer(m.body) }));
      } else if (m.method === "BYE" || m.method === "CANCEL") {
        socket.send(responseTo(m, 200));
        await byCall.get(callId)?.close("hangup");
        byCall.delete(callId);
      } else {
        socket.send(responseTo(m, 200));
      }
    }
  };

  const registerAgent = async (url: string, agent: Credentials): Promise<boolean> => {
    const socket = await SipSocket.connect(url);
    sockets.push(socket);
    const phone = new SipPhone(socket, { ...agent, realm: REALM });
    const answer = await phone.register({ expires: 3600 });
    if (answer.status !== 200) return false;
    serveSocket(socket, phone, agent.username).catch(fail);
    return true;
  };

  /** A SIP caller dials `to` from `device` on its own socket; resolves once answered and its media is up. */
  const placeCall = async (url: string, device: Credentials, to: string, n: number): Promise<boolean> => {
    const socket = await SipSocket.connect(url);
    sockets.push(socket);
    const phone = new SipPhone(socket, { ...device, realm: REALM });
    const leg = await newLeg(`sip-caller-${n}-${hex(3)}`, "caller", CALLER_TONE);
    const call = new PhoneCall(phone, to);
    let m = await call.place({ sdp: await leg.createOffer() });
    while (m.status !== undefined && m.status < 200) m = await socket.next(30_000);
    if (m.status !== 200) {
      await leg.close("rejected");
      return false;
    }
    await leg.acceptAnswer(m.body);
    call.dialog(m).send("ACK");
    serveSocket(socket, phone, `sip-caller-${n}`).catch(fail);
    try {
      await connected([leg]);
      return true;
    } catch {
      // Media never came up (ICE on the loaded machine): the server hangs the call up.
      await leg.close("connect failed");
      return false;
    }
  };

  let callers = 0;
  process.on("message", ({ seq, request }: { seq: number; request: Request }) => {
    const send = (answer: Reply) => reply(seq, answer);
    void (async () => {
      switch (request.op) {
        case "agents": {
          const ok = await Promise.all(request.agents.map((a) => registerAgent(request.url, a)));
          send({ op: "agents", registered: ok.filter(Boolean).length });
          break;
        }
        case "callers": {
          const ok: boolean[] = [];
          for (let i = 0; i < request.count; i++) ok.push(await placeCall(request.url, request.device, request.to, ++callers));
          send({ op: "callers", answered: ok.filter(Boolean).length });
          break;
        }
        case "answer": {
          const answers = await Promise.all(
            request.offers.map(async ({ id, sdp }) => ({ id, sdp: await (await newLeg(`far-${id}`, "bare", HOLD_MUSIC)).acceptOffer(sdp) })),
          );
          send({ op: "answer", answers });
          break;
        }
        case "drop-bare":
          await Promise.all([...legs.values()].filter((l) => l.group === "bare").map((l) => l.leg.close("hangup")));
          send({ op: "drop-bare" });
          break;
        case "stats": {
          const cpu = process.cpuUsage();
          send({ op: "stats", legs: [...legs].filter(([, l]) => l.leg.state === "connected").map(([id, l]) => [id, l.group, l.leg.stats()]), micros: cpu.user + cpu.system });
          break;
        }
        case "close":
          closing = true;
          await Promise.all(sockets.map((s) => s.close()));
          await engine.close();
          process.exit(0);
      }
    })().catch(fail);
  });
}

// ---- the server process (this one) -----------------------------------------------------------

interface Api {
  call<T = unknown>(method: string, path: string, data?: unknown): Promise<T>;
  account: string;
}

async function connectApi(server: RunningServer): Promise<Api> {
  let token = "";
  const call = async <T>(method: string, path: string, data?: unknown): Promise<T> => {
    const res = await fetch(new URL(path, server.url), {
      method,
      headers: { "Content-Type": "application/json", ...(token ? { "X-Auth-Token": token } : {}) },
      body: data === undefined ? undefined : JSON.stringify({ data }),
    });
    const body = (await res.json()) as { data: T; auth_token?: string };
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(body)}`);
    token ||= body.auth_token ?? "";
    return body.data;
  };
  const login = await call<{ account_id: string }>("PUT", "/v2/user_auth", { credentials: credentials("admin", DEMO_PASSWORD), account_name: DEMO_ACCOUNT_NAME });
  return { call, account: login.account_id };
}

interface QueueView {
  waiting: number;
  offering: number;
  handled: number;
  /** The status API's figures. */
  queued: number;
  loggedIn: number;
  available: number;
}

async function queueView(api: Api, queueId: string): Promise<QueueView> {
  const base = `/v2/accounts/${api.account}/callq_queues/${queueId}`;
  const [sessions] = await api.call<{ session_list: { state: string }[] }[]>("GET", `${base}/sessions`);
  const status = await api.call<{ active_recipient_count: number; available_recipient_count: number; stats: { active_session_count: number } }>("GET", `${base}/status`);
  const count = (state: string) => sessions?.session_list.filter((s) => s.state === state).length ?? 0;
  return {
    waiting: count("waiting"),
    offering: count("offering"),
    handled: count("handled"),
    queued: status.stats.active_session_count,
    loggedIn: status.active_recipient_count,
    available: status.available_recipient_count,
  };
}

const showQueue = (q: QueueView) => `${q.waiting} waiting, ${q.offering} offering, ${q.handled} handled (status: ${q.queued} queued, ${q.loggedIn} logged in, ${q.available} available)`;

interface Point {
  name: string;
  cpu: number;
  phonesCpu: number;
  p50: number;
  p99: number;
  max: number;
  elu: number;
  load: [number, number];
  server: Counters;
  phones: Counters;
  clock: { p99: number; max: number; skipped: number };
  queue: [string, string];
}

async function measure(name: string, media: MediaEngine, phones: Phones, check: () => Promise<string>): Promise<Point> {
  const queueBefore = await check();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const load0 = loadavg()[0] ?? 0;
  const serverBefore = rowsOf(media.legs, () => "server");
  const phonesBefore = await phones.ask({ op: "stats" });
  media.clock.resetStats();
  const elu0 = performance.eventLoopUtilization();
  loop.enable();
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  await sleep(SECONDS * 1000);
  const cpu = process.cpuUsage(cpu0);
  const wallMs = performance.now() - wall0;
  loop.disable();
  const elu = performance.eventLoopUtilization(elu0).utilization;
  const clock = media.clock.stats();
  const serverAfter = rowsOf(media.legs, () => "server");
  const phonesAfter = await phones.ask({ op: "stats" });
  const load1 = loadavg()[0] ?? 0;
  const queueAfter = await check();
  return {
    name,
    cpu: (cpu.user + cpu.system) / 1000 / wallMs,
    phonesCpu: (phonesAfter.micros - phonesBefore.micros) / 1000 / wallMs,
    p50: loop.percentile(50) / 1e6,
    p99: loop.percentile(99) / 1e6,
    max: loop.max / 1e6,
    elu,
    load: [load0, load1],
    server: counters(serverBefore, serverAfter),
    phones: counters(phonesBefore.legs, phonesAfter.legs),
    clock: { p99: clock.latenessP99Ms, max: clock.latenessMaxMs, skipped: clock.skipped },
    queue: [queueBefore, queueAfter],
  };
}

const pct = (x: number, digits = 0) => `${(x * 100).toFixed(digits)}%`;
const ms = (x: number) => x.toFixed(1);
const lostText = (c: Counters) => `${c.lost} / ${c.dropped} / ${c.underruns} / ${c.stale}`;

function show(point: Point): void {
  report(`callq-media ${point.name}, ${SECONDS} s`, [
    ["CPU, server process (all threads)", `${pct(point.cpu, 1)} of one core`],
    ["main event loop: delay p50 / p99 / max (1 ms sampling)", `${ms(point.p50)} / ${ms(point.p99)} / ${ms(point.max)} ms`],
    ["main event loop: utilisation", pct(point.elu, 1)],
    ["frame clock lateness p99 / max, ticks skipped", `${point.clock.p99.toFixed(2)} / ${ms(point.clock.max)} ms, ${point.clock.skipped}`],
    [`server legs (${point.server.legs}): packets sent / received`, `${point.server.sent} / ${point.server.received}`],
    ["server legs: lost frames (gaps / FIFO drops / underruns / not sent late)", lostText(point.server)],
    [`phones' legs (${point.phones.legs}): packets sent / received`, `${point.phones.sent} / ${point.phones.received}`],
    ["phones' legs: lost frames (gaps / FIFO drops / underruns / not sent late)", lostText(point.phones)],
    ["CPU, phones process", `${pct(point.phonesCpu, 1)} of one core`],
    ["queue Sales before / after the window", `${point.queue[0]} | ${point.queue[1]}`],
    ["load average (1 min) before / after, 2 cores", `${point.load[0].toFixed(1)} / ${point.load[1].toFixed(1)}`],
  ]);
}

let serverWorkers = "?";
const setups: string[] = [];

async function run(round: number): Promise<Point[]> {
  const bench = await startBenchServer("callq-media", { mediaWorkers: SERVER_WORKERS });
  const { server, dataDir } = bench;
  const media = server.calls.context.media;
  serverWorkers = "workerCount" in media ? String(media.workerCount) : "none (the option does not exist yet)";
  const phones = new Phones();
  const points: Point[] = [];
  try {
    const api = await connectApi(server);
    const acc = `/v2/accounts/${api.account}`;
    const queues = await api.call<{ id: string; name: string }[]>("GET", `${acc}/callq_queues`);
    const sales = queues.find((q) => q.name === "Sales");
    if (!sales) throw new Error("no Sales queue in the demo account");
    await api.call("PATCH", `${acc}/callq_queues/${sales.id}`, { agent_wrapup_time: 0, ring_timeout: 60, timeout: 3600 });
    const view = () => queueView(api, sales.id);

    // 20 agents: users with callq enabled, a device each, members of Sales; phones in the child.
    const agents: (Credentials & { userId: string })[] = [];
    for (let i = 1; i <= AGENTS; i++) {
      const username = `bench_agent${i}`;
      const user = await api.call<{ id: string }>("PUT", `${acc}/users`, { username, first_name: "Bench", last_name: `Agent ${i}`, password: hex(8), callq: { enabled: true } });
      const sip = { username: `sip_bench${i}_${hex(2)}`, password: hex(8) };
      await api.call("PUT", `${acc}/devices`, { name: `${username} phone`, owner_id: user.id, device_type: "softphone", sip });
      agents.push({ ...sip, userId: user.id });
    }
    await api.call("POST", `${acc}/callq_queues/${sales.id}/recipients`, { action: "add", members: agents.map((a) => a.userId) });
    const callerDevice = { username: `sip_callers_${hex(2)}`, password: hex(8) };
    await api.call("PUT", `${acc}/devices`, { name: "bench SIP callers", device_type: "sip_device", sip: callerDevice });
    const registered = await phones.ask({ op: "agents", url: server.url, agents });
    if (registered.registered !== AGENTS) throw new Error(`only ${registered.registered} of ${AGENTS} agent phones registered`);
    await sleep(2000);

    const queueCheck = async () => showQueue(await view());
    points.push(await measure(`run ${round}: idle (agents registered, logged out, no calls)`, media, phones, queueCheck));

    // Bare legs as the simulated callers' own: 50 server legs playing the caller's tone, hearing hold music.
    const bare: WebRtcLeg[] = [];
    const tone = await media.player(CALLER_TONE);
    let failed = 0;
    /** One bare leg up, tried again (a new pair) when ICE fails on the loaded machine. */
    const bareLeg = async (n: number): Promise<WebRtcLeg> => {
      for (let attempt = 1; ; attempt++) {
        const leg = media.createLeg({ id: `bare-${n}-${attempt}` });
        const { answers } = await phones.ask({ op: "answer", offers: [{ id: leg.id, sdp: await leg.createOffer() }] });
        await leg.acceptAnswer(answers[0]?.sdp ?? "");
        try {
          await connected([leg]);
          leg.play(tone);
          return leg;
        } catch (error) {
          failed += 1;
          if (attempt === 5) throw error;
        }
      }
    };
    for (let i = 0; i < WAITING; i += 5) bare.push(...(await Promise.all(Array.from({ length: 5 }, (_, j) => bareLeg(i + j)))));
    if (failed > 0) process.stderr.write(`bare legs: ${failed} set-ups failed (ICE) and were tried again\n`);
    await sleep(2000);
    points.push(await measure(`run ${round}: legs (${WAITING} bare server legs like the simulated callers', far ends in the phones process)`, media, phones, queueCheck));
    await Promise.all(bare.map((leg) => leg.close("hangup")));
    await phones.ask({ op: "drop-bare" });
    await sleep(1000);

    // Callers whose media fails to come up on the loaded machine (ICE) leave; each step tops the
    // simulated callers up to the account's limit and the SIP callers to their number until the
    // queue holds what the point needs.
    let simCount = 0;
    let sipCount = 0;
    const simLive = async () => (await api.call<unknown[]>("GET", `${acc}/sim/calls?page_size=100`)).length;
    const sipLive = async () => (await phones.ask({ op: "stats" })).legs.filter(([, g]) => g === "caller").length;
    const agentLegs = async () => (await phones.ask({ op: "stats" })).legs.filter(([, g]) => g === "agent").length;
    const recording = async () => (await readdir(join(dataDir, "recordings.partial")).catch(() => [])).length;
    const steady = async (what: string, want: { handled: number; sip: number; recorded?: number }) => {
      const end = Date.now() + 180_000;
      for (;;) {
        const live = await simLive();
        for (let i = live; i < SIM_LIMIT; i++) {
          simCount += 1;
          const n = simCount;
          await api.call("POST", `${acc}/sim/calls`, { to: "5001", caller_id_name: `Caller ${n}`, caller_id_number: `+1555010${String(n).padStart(4, "0")}`, audio: CALLER_TONE });
        }
        const sip = await sipLive();
        if (sip < want.sip) {
          const placed = await phones.ask({ op: "callers", url: server.url, device: callerDevice, to: "5001", count: want.sip - sip });
          sipCount += want.sip - sip;
          if (placed.answered < want.sip - sip) process.stderr.write(`${want.sip - sip - placed.answered} SIP callers not answered\n`);
        }
        const q = await view();
        const agentsTalking = await agentLegs();
        const recorded = await recording();
        if (q.waiting === WAITING && q.handled === want.handled && agentsTalking === want.handled && (want.recorded === undefined || recorded === want.recorded)) return;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${showQueue(q)}, ${agentsTalking} agent legs, ${recorded} recordings`);
        await sleep(1000);
      }
    };

    // (a) 50 simulated callers waiting with hold music.
    await steady(`${WAITING} callers waiting`, { handled: 0, sip: 0 });
    await sleep(2000);
    points.push(await measure(`run ${round}: (a) ${WAITING} simulated callers waiting with hold music, no agents`, media, phones, queueCheck));

    // (b) 20 agents log in Ready and take 20 of them; 20 SIP callers join from the phones process.
    for (const a of agents) {
      await api.call("POST", `${acc}/callq_recipients/${a.userId}/status`, { status: "login" });
      await api.call("POST", `${acc}/callq_recipients/${a.userId}/status`, { status: "ready" });
    }
    await steady(`${WAITING} waiting and ${AGENTS} talking`, { handled: AGENTS, sip: AGENTS });
    await sleep(2000);
    points.push(await measure(`run ${round}: (b) ${WAITING} waiting (simulated and SIP) + ${AGENTS} agents talking to callers`, media, phones, queueCheck));

    // (c) The agents' users ask for recording; the 20 talking callers hang up, the next 20 are
    // bridged (and recorded), and new simulated callers keep 50 waiting.
    for (const a of agents) await api.call("PATCH", `${acc}/users/${a.userId}`, { call_recording: { enabled: true } });
    const [sessions] = await api.call<{ session_list: { state: string; call_id: string }[] }[]>("GET", `${acc}/callq_queues/${sales.id}/sessions`);
    const talking = (sessions?.session_list ?? []).filter((s) => s.state === "handled").map((s) => s.call_id);
    for (const id of talking) await api.call("POST", `${acc}/channels/${id}`, { action: "hangup" });
    await steady(`${WAITING} waiting and ${AGENTS} talking, recorded`, { handled: AGENTS, sip: AGENTS, recorded: AGENTS });
    await sleep(2000);
    points.push(await measure(`run ${round}: (c) as (b), the ${AGENTS} bridged calls recorded`, media, phones, queueCheck));
    // 70 simulated and 20 SIP callers when every call set up at the first try.
    setups.push(`run ${round}: callers placed: ${simCount} simulated, ${sipCount} SIP (${SIM_LIMIT + AGENTS} and ${AGENTS} without set-up failures)`);
  } finally {
    await phones.close();
    await bench.close();
  }
  for (const p of points) show(p);
  return points;
}

if (process.env.BENCH_CALLQ_MEDIA_ROLE === "phones") {
  servePhones();
} else {
  const all: Point[] = [];
  for (let round = 1; round <= RUNS; round++) all.push(...(await run(round)));
  process.stdout.write(
    `\nserver media workers (as startServer makes its MediaEngine): ${serverWorkers}\n` +
      `${setups.join("\n")}\n` +
      "\n| point | server CPU | main loop busy | main loop p50 / p99 / max | frame clock p99 | lost at server legs (gaps/drops/underruns/late) | lost at phones | phones CPU | load |\n" +
      "|---|---|---|---|---|---|---|---|---|\n" +
      all
        .map(
          (p) =>
            `| ${p.name} | ${pct(p.cpu)} | ${pct(p.elu)} | ${ms(p.p50)} / ${ms(p.p99)} / ${ms(p.max)} ms | ${p.clock.p99.toFixed(1)} ms | ${lostText(p.server)} | ${lostText(p.phones)} | ${pct(p.phonesCpu)} | ${p.load[0].toFixed(1)}–${p.load[1].toFixed(1)} |`,
        )
        .join("\n") +
      "\n",
  );
}
