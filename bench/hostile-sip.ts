// SIP floods (issue 14, item 12): serve mode as a child process; a legitimate phone on its own
// socket sends an OPTIONS every 150 ms and a digest REGISTER every tenth turn, timed from send to
// final answer, first with nothing else running, then while 8 sockets in another process send
// 1,000 messages a second between them (BENCH_FLOOD_RATE): (a) malformed SIP and junk, (b)
// well-formed OPTIONS (the most parsing per message), each flooder reconnecting at once whenever
// the server closes it. Reported per phase: the
// phone's p50/p99/max, its unanswered requests and 5xx, the server's CPU (utime+stime of its
// process), messages the flooders tried, answers they got, sockets the server closed, and
// whether the server was still running. BENCH_PHASE_S sets each phase's length (default 20 s);
// BENCH_SERVER_ENTRY runs another build of the server (a before/after comparison).
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import WebSocket from "ws";
import { percentile, report } from "./report.js";
import { cpuMs } from "./lib/process.js";
import { floodGarbage, probeOptions } from "../test/helpers/sip-flood.js";

const PHASE_S = Number(process.env.BENCH_PHASE_S ?? 20);
const FLOODERS = 8;
const REALM = "demo.switchboard.local";
/** Messages a second from all the flooders together: the issue's figure. */
const FLOOD_RATE = Number(process.env.BENCH_FLOOD_RATE ?? 1000);
const TICK_MS = 20;
const PER_TICK = Math.max(1, Math.round((FLOOD_RATE * TICK_MS) / 1000 / FLOODERS));
/** The phone's pace: a UA's requests, not a load generator's (it has a budget like any socket). */
const PHONE_GAP_MS = 150;
const ENTRY = process.env.BENCH_SERVER_ENTRY ?? join(import.meta.dirname, "../out/main/server.js");
/** A request unanswered this long counts as lost (and the phone carries on). */
const ANSWER_TIMEOUT_MS = 10_000;

const hex = (n = 8) => randomBytes(n).toString("hex");
const md5 = (s: string) => createHash("md5").update(s).digest("hex");

// ---- the flooder process: `node --import tsx bench/hostile-sip.ts --flood <url> <kind>` ----

async function flood(url: string, kind: "garbage" | "options"): Promise<void> {
  const stats = { tried: 0, answers: 0, closed: 0 };
  let running = true;
  process.on("SIGTERM", () => {
    running = false;
  });
  const one = async (): Promise<void> => {
    while (running) {
      const ws = new WebSocket(`${url.replace(/^http/, "ws")}/sip`, ["sip"]);
      const opened = await new Promise<boolean>((resolve) => {
        ws.once("open", () => resolve(true));
        ws.once("error", () => resolve(false));
      });
      if (!opened) continue;
      ws.on("message", () => stats.answers++);
      const closed = new Promise<void>((resolve) => ws.once("close", () => resolve()));
      // Each socket its share of FLOOD_RATE, a few messages every tick.
      for (let i = 0; running && ws.readyState === ws.OPEN; ) {
        for (let k = 0; k < PER_TICK; k++, i++) ws.send(kind === "garbage" ? floodGarbage(REALM, i) : probeOptions(REALM));
        stats.tried += PER_TICK;
        await new Promise((r) => setTimeout(r, TICK_MS));
      }
      if (ws.readyState === ws.OPEN) ws.close();
      else stats.closed++;
      await closed;
    }
  };
  await Promise.all(Array.from({ length: FLOODERS }, one));
  process.stdout.write(`${JSON.stringify(stats)}\n`);
}

// ---- the bench ----

interface Phase {
  name: string;
  samples: number[];
  registers: number[];
  unanswered: number;
  fiveXx: number;
  cpuS: number;
  wallS: number;
  flood?: { tried: number; answers: number; closed: number };
}


class Phone {
  readonly #ws: WebSocket;
  readonly #inbox: string[] = [];
  #wake: (() => void) | null = null;
  readonly callId = `${hex()}@bench.invalid`;
  readonly contact = `sip:${hex(4)}@${hex(4)}.invalid;transport=ws`;
  cseq = 0;

  constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data) => {
      this.#inbox.push(Buffer.isBuffer(data) ? data.toString("utf8") : String(data));
      this.#wake?.();
    });
  }

  static async open(url: string): Promise<Phone> {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/sip`, ["sip"]);
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    return new Phone(ws);
  }

  /** Sends and waits for the final answer: its status, or 0 if none came in time. */
  async ask(text: string): Promise<{ status: number; text: string }> {
    this.#inbox.length = 0;
    this.#ws.send(text);
    const deadline = performance.now() + ANSWER_TIMEOUT_MS;
    for (;;) {
      const reply = this.#inbox.shift();
      if (reply !== undefined) {
        const status = Number(/^SIP\/2\.0 (\d{3})/.exec(reply)?.[1] ?? 0);
        if (status >= 200) return { status, text: reply };
        continue;
      }
      const left = deadline - performance.now();
      if (left <= 0) return { status: 0, text: "" };
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }

  registerText(username: string, auth?: string): string {
    const aor = `sip:${username}@${REALM}`;
    return [
      `REGISTER sip:${REALM} SIP/2.0`,
      `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=z9hG4bK${hex()}`,
      "Max-Forwards: 70",
      `To: <${aor}>`,
      `From: <${aor}>;tag=${hex(4)}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${++this.cseq} REGISTER`,
      `Contact: <${this.contact}>;expires=300`,
      ...(auth ? [`Authorization: ${auth}`] : []),
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
  }

  /** REGISTER, the 401, REGISTER with qop=auth digest: the status of the last answer. */
  async register(username: string, password: string): Promise<number> {
    const challenge = await this.ask(this.registerText(username));
    if (challenge.status !== 401) return challenge.status;
    const nonce = /nonce="([^"]+)"/.exec(challenge.text)?.[1] ?? "";
    const uri = `sip:${REALM}`;
    const cnonce = hex(4);
    const ha1 = md5(`${username}:${REALM}:${password}`);
    const response = md5(`${ha1}:${nonce}:00000001:${cnonce}:auth:${md5(`REGISTER:${uri}`)}`);
    const auth = `Digest username="${username}", realm="${REALM}", nonce="${nonce}", uri="${uri}", response="${response}", algorithm=MD5, qop=auth, nc=00000001, cnonce="${cnonce}"`;
    return (await this.ask(this.registerText(username, auth))).status;
  }

  close(): void {
    this.#ws.close();
  }
}

function waitForUrl(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /Switchboard is serving (http:\/\/127\.0\.0\.1:[1-9]\d*)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`server exited with ${code}: ${out}`)));
  });
}

async function phase(name: string, server: ChildProcess, url: string, phone: Phone, device: { username: string; password: string }, kind?: "garbage" | "options"): Promise<Phase> {
  const flooder = kind
    ? spawn(process.execPath, ["--import", "tsx", import.meta.filename, "--flood", url, kind], { stdio: ["ignore", "pipe", "inherit"] })
    : null;
  let floodOut = "";
  flooder?.stdout?.on("data", (c: Buffer) => (floodOut += c.toString()));
  // Let the flood get going before measuring.
  if (flooder) await new Promise((r) => setTimeout(r, 1000));
  const pid = server.pid ?? 0;
  const result: Phase = { name, samples: [], registers: [], unanswered: 0, fiveXx: 0, cpuS: 0, wallS: 0 };
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  for (let i = 0; performance.now() - t0 < PHASE_S * 1000; i++) {
    const start = performance.now();
    const status = i % 10 === 9 ? await phone.register(device.username, device.password) : (await phone.ask(probeOptions(REALM))).status;
    const ms = performance.now() - start;
    if (status === 0) result.unanswered++;
    else if (status >= 500) result.fiveXx++;
    else (i % 10 === 9 ? result.registers : result.samples).push(ms);
    await new Promise((r) => setTimeout(r, PHONE_GAP_MS));
  }
  result.wallS = (performance.now() - t0) / 1000;
  result.cpuS = (cpuMs(pid) - cpu0) / 1000;
  if (flooder) {
    const exited = new Promise((r) => flooder.once("exit", r));
    flooder.kill("SIGTERM");
    await exited;
    result.flood = JSON.parse(floodOut.trim().split("\n").pop() ?? "{}") as Phase["flood"];
  }
  return result;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-hostile-sip-"));
  const server = spawn(process.execPath, [ENTRY, "--port", "0", "--events-port", "0", "--data-dir", dataDir, "--log-level", "error"], { stdio: ["ignore", "pipe", "pipe"] });
  const load0 = loadavg()[0] ?? 0;
  try {
    const url = await waitForUrl(server);
    const login = await fetch(`${url}/v2/user_auth`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ data: { credentials: md5("admin:switchboard"), account_name: "demo" } }),
    });
    const auth = (await login.json()) as { auth_token: string; data: { account_id: string } };
    const device = { username: `bench_${hex(4)}`, password: hex(8) };
    const created = await fetch(`${url}/v2/accounts/${auth.data.account_id}/devices`, {
      method: "PUT",
      headers: { "X-Auth-Token": auth.auth_token, "Content-Type": "application/json" },
      body: JSON.stringify({ data: { name: device.username, sip: device } }),
    });
    if (created.status !== 201) throw new Error(`device not created: ${created.status}`);
    const phone = await Phone.open(url);
    if ((await phone.register(device.username, device.password)) !== 200) throw new Error("the phone did not register");

    const phases = [
      await phase("no flood", server, url, phone, device),
      await phase("(a) 8 sockets of malformed SIP and junk", server, url, phone, device, "garbage"),
      await phase("(b) 8 sockets of well-formed OPTIONS", server, url, phone, device, "options"),
    ];
    phone.close();
    const alive = server.exitCode === null && server.signalCode === null;
    const ms = (v: number) => `${v.toFixed(1)}`;
    const rows: [string, string][] = [];
    for (const p of phases) {
      rows.push([p.name, ""]);
      rows.push(["  OPTIONS p50 / p99 / max", `${ms(percentile(p.samples, 50))} / ${ms(percentile(p.samples, 99))} / ${ms(Math.max(...p.samples))} ms (${p.samples.length})`]);
      rows.push(["  REGISTER with digest p50 / p99", `${ms(percentile(p.registers, 50))} / ${ms(percentile(p.registers, 99))} ms (${p.registers.length})`]);
      rows.push(["  unanswered / 5xx", `${p.unanswered} / ${p.fiveXx}`]);
      rows.push(["  server CPU", `${((100 * p.cpuS) / p.wallS).toFixed(0)}% of a core (${p.cpuS.toFixed(2)} s in ${p.wallS.toFixed(1)} s)`]);
      if (p.flood) rows.push(["  flood tried / answered / sockets closed", `${p.flood.tried} / ${p.flood.answers} / ${p.flood.closed}`]);
    }
    rows.push(["server still running", alive ? "yes (0 crashes)" : "NO"]);
    rows.push(["load average before / after", `${load0.toFixed(1)} / ${(loadavg()[0] ?? 0).toFixed(1)}`]);
    report(`SIP floods (${PHASE_S} s a phase, ${FLOOD_RATE} msg/s, ${ENTRY === join(import.meta.dirname, "../out/main/server.js") ? "this build" : ENTRY})`, rows);
  } finally {
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      server.kill("SIGTERM");
      await exited;
    }
    await rm(dataDir, { recursive: true, force: true });
  }
}

const at = process.argv.indexOf("--flood");
if (at !== -1) await flood(process.argv[at + 1] ?? "", process.argv[at + 2] === "options" ? "options" : "garbage");
else await main();
