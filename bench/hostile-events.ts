// Issue 14, items 3, 9 and 11: the event websocket under hostile floods. A serve-mode server
// (its own process, its CPU read from /proc); a legitimate client in this process keeps creating
// devices over HTTP, reading its account, pinging its event socket and waiting for each creation's
// event, while a second process floods: 28,000-binding subscribes, sockets held open and never
// subscribed, and sockets holding 1,000 bindings each that fan-out must get through. Figures: the
// client's p50/p99 per phase beside the quiet run, server CPU, what the flood tried and was
// answered, 5xx, crashes, and acknowledged writes lost.
import { fork, type ChildProcess } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { performance } from "node:perf_hooks";
import WebSocket from "ws";
import { demoGrant, serve, type DemoGrant } from "../test/helpers/serve.js";
import { percentile, report } from "./report.js";
import { cpuMs } from "./lib/process.js";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
/** The legitimate client's pace: one round of its four requests this often. */
const ROUND_MS = 50;

type Flood = "none" | "bindings" | "idle-sockets" | "wide-fan-out";
const FLOODS: Flood[] = ["none", "bindings", "idle-sockets", "wide-fan-out"];

interface Setup {
  url: string;
  grants: DemoGrant[];
}
type ToFlooder = { type: "start"; flood: Flood } | { type: "stop" };
type FromFlooder = { type: "ready" } | { type: "flooding" } | { type: "result"; tried: number; answers: Record<string, number>; cpuMs: number };

const many = (count: number, prefix: string): string[] => Array.from({ length: count }, (_, i) => `${prefix}${i}`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A socket, opened; rejects with the HTTP status when the upgrade is refused. */
function openSocket(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, "ws")}/events`);
    ws.once("open", () => resolve(ws));
    ws.once("unexpected-response", (_req, res) => {
      reject(new Error(String(res.statusCode)));
      ws.terminate();
    });
    ws.once("error", reject);
  });
}

/** Sends one request and resolves with the reply to it. */
function ask(ws: WebSocket, message: Record<string, unknown>): Promise<{ status?: string; data?: { errors?: string[] } }> {
  const requestId = `${Math.random()}`;
  return new Promise((resolve, reject) => {
    const onMessage = (raw: WebSocket.RawData): void => {
      const m = JSON.parse(raw.toString()) as { action?: string; request_id?: string; status?: string; data?: { errors?: string[] } };
      // A request refused unread (too large) is answered without its request_id.
      if (m.action !== "reply" || (m.request_id !== undefined && m.request_id !== requestId)) return;
      done();
      resolve(m);
    };
    const onClose = (): void => {
      done();
      reject(new Error("closed"));
    };
    const done = (): void => {
      ws.off("message", onMessage);
      ws.off("close", onClose);
    };
    ws.on("message", onMessage);
    ws.on("close", onClose);
    ws.send(JSON.stringify({ ...message, request_id: requestId }));
  });
}

/** Flooder mode: runs the flood it is told until told to stop, then reports what it tried. */
async function flooder(setup: Setup): Promise<void> {
  const send = (m: FromFlooder): void => void process.send?.(m);
  /** The phase under way: a loop of an earlier phase stops even while it waits on a socket. */
  let phase = 0;
  let running = false;
  const live = (mine: number): boolean => running && phase === mine;
  let tried = 0;
  let answers: Record<string, number> = {};
  let sockets: WebSocket[] = [];
  let cpuBefore = process.cpuUsage();
  const count = (answer: string): void => {
    answers[answer] = (answers[answer] ?? 0) + 1;
  };
  // In turn: 28,000 bindings (370 KB, refused unread by size) and 1,001 (11 KB, read, refused by count).
  const messages = [many(28_000, "call."), many(1_001, "call.")];

  async function bindings(grant: DemoGrant, mine: number): Promise<void> {
    while (live(mine)) {
      let ws: WebSocket;
      try {
        ws = await openSocket(setup.url);
      } catch (err) {
        count(`upgrade ${(err as Error).message}`);
        await sleep(100);
        continue;
      }
      sockets.push(ws);
      try {
        while (live(mine)) {
          tried++;
          const bindings = messages[tried % 2];
          const reply = await ask(ws, { action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, bindings } });
          count(reply.data?.errors?.[0]?.replace(/\d+/g, "N") ?? String(reply.status));
        }
      } catch {
        count("socket closed");
      }
    }
  }

  async function idleSockets(mine: number): Promise<void> {
    while (live(mine)) {
      tried++;
      try {
        const ws = await openSocket(setup.url);
        if (!live(mine)) {
          ws.terminate();
          return;
        }
        ws.on("close", (code) => count(`closed ${code}`));
        sockets.push(ws);
        count("open");
      } catch (err) {
        count(`upgrade ${(err as Error).message}`);
      }
    }
  }

  async function wideFanOut(mine: number): Promise<void> {
    // 16 sockets a token (its cap) on 6 tokens, 96 sockets, short of the account's 100 so the
    // client still gets its own; each holds 1,000 bindings of which one matches the client's events.
    const bindingSet = [...many(999, "call.CHANNEL_ANSWER.c"), "object.doc_created.*"];
    await Promise.all(
      setup.grants.slice(0, 6).flatMap((grant) =>
        Array.from({ length: 16 }, async () => {
          tried++;
          try {
            const ws = await openSocket(setup.url);
            sockets.push(ws);
            const reply = await ask(ws, { action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, bindings: bindingSet } });
            count(reply.status === "success" ? "subscribed 1,000 bindings" : (reply.data?.errors?.[0]?.replace(/\d+/g, "N") ?? "error"));
          } catch (err) {
            count(`failed ${(err as Error).message}`);
          }
        }),
      ),
    );
    send({ type: "flooding" });
    // Churn: each socket drops and takes back one binding in turn while the client is measured.
    while (live(mine)) {
      for (const ws of sockets) {
        if (!live(mine) || ws.readyState !== WebSocket.OPEN) continue;
        tried += 2;
        await ask(ws, { action: "unsubscribe", data: { bindings: ["call.CHANNEL_ANSWER.c0"] } }).catch(() => count("socket closed"));
        await ask(ws, { action: "subscribe", data: { account_id: setup.grants[0]?.accountId, bindings: ["call.CHANNEL_ANSWER.c0"] } }).catch(() => count("socket closed"));
      }
      await sleep(5);
    }
  }

  process.on("message", (m: ToFlooder) => {
    if (m.type === "start") {
      running = true;
      const mine = ++phase;
      tried = 0;
      answers = {};
      cpuBefore = process.cpuUsage();
      if (m.flood === "bindings") for (const grant of setup.grants.slice(0, 8)) void bindings(grant, mine);
      if (m.flood === "idle-sockets") for (let i = 0; i < 32; i++) void idleSockets(mine);
      if (m.flood === "wide-fan-out") void wideFanOut(mine);
      else send({ type: "flooding" });
      return;
    }
    running = false;
    const cpu = process.cpuUsage(cpuBefore);
    for (const ws of sockets) ws.terminate();
    sockets = [];
    send({ type: "result", tried, answers, cpuMs: (cpu.user + cpu.system) / 1000 });
  });
  send({ type: "ready" });
}

function next(child: ChildProcess, type: FromFlooder["type"]): Promise<FromFlooder> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} from the flooder`)), 120_000);
    const on = (m: FromFlooder): void => {
      if (m.type !== type) return;
      clearTimeout(timer);
      child.off("message", on);
      resolve(m);
    };
    child.on("message", on);
  });
}

/** The server's process, found by its data directory on its command line. */
function pidServing(dataDir: string): number {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").includes(dataDir)) return Number(entry);
    } catch {
      // A process that ended while the list was read.
    }
  }
  throw new Error(`no process serves ${dataDir}`);
}


interface Measured {
  get: number[];
  put: number[];
  event: number[];
  ping: number[];
  /** A new socket opened and subscribed, every tenth round. */
  join: number[];
  fiveXx: number;
  failures: number;
  created: string[];
}

/** The legitimate client for DURATION_S: GET, PUT (and its event), ping, every ROUND_MS. */
/** The legitimate client's socket, subscribed to its own creations before any flood starts. */
async function subscribedSocket(url: string, grant: DemoGrant): Promise<WebSocket> {
  const ws = await openSocket(url);
  const subscribed = await ask(ws, { action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, binding: "object.doc_created.device" } });
  if (subscribed.status !== "success") throw new Error("the legitimate client could not subscribe");
  return ws;
}

async function legitimate(url: string, grant: DemoGrant, tag: string, ws: WebSocket): Promise<Measured> {
  const m: Measured = { get: [], put: [], event: [], ping: [], join: [], fiveXx: 0, failures: 0, created: [] };
  // A creation's event may come before the answer to its PUT: whichever is second takes the figure.
  const waiting = new Map<string, number>();
  const arrived = new Map<string, number>();
  ws.on("message", (raw) => {
    const e = JSON.parse(raw.toString()) as { action?: string; data?: { id?: string } };
    if (e.action !== "event" || !e.data?.id) return;
    const sentAt = waiting.get(e.data.id);
    if (sentAt === undefined) arrived.set(e.data.id, performance.now());
    else {
      m.event.push(performance.now() - sentAt);
      waiting.delete(e.data.id);
    }
  });
  const headers = { "X-Auth-Token": grant.token, "Content-Type": "application/json" };
  const timed = async (list: number[], work: () => Promise<void>): Promise<void> => {
    const started = performance.now();
    try {
      await work();
      list.push(performance.now() - started);
    } catch {
      m.failures++;
    }
  };
  const end = performance.now() + DURATION_S * 1000;
  for (let round = 0; performance.now() < end; round++) {
    const roundStart = performance.now();
    await timed(m.get, async () => {
      const res = await fetch(`${url}/v2/accounts/${grant.accountId}`, { headers });
      await res.arrayBuffer();
      if (res.status >= 500) m.fiveXx++;
      if (res.status !== 200) throw new Error(String(res.status));
    });
    await timed(m.put, async () => {
      const sentAt = performance.now();
      const res = await fetch(`${url}/v2/accounts/${grant.accountId}/devices`, { method: "PUT", headers, body: JSON.stringify({ data: { name: `${tag} ${round}` } }) });
      const body = (await res.json()) as { data?: { id?: string } };
      if (res.status >= 500) m.fiveXx++;
      if (res.status !== 201 || !body.data?.id) throw new Error(String(res.status));
      m.created.push(body.data.id);
      const at = arrived.get(body.data.id);
      if (at === undefined) waiting.set(body.data.id, sentAt);
      else {
        m.event.push(at - sentAt);
        arrived.delete(body.data.id);
      }
    });
    await timed(m.ping, async () => {
      await ask(ws, { action: "ping" });
    });
    if (round % 10 === 0) {
      await timed(m.join, async () => {
        const other = await openSocket(url);
        const reply = await ask(other, { action: "subscribe", auth_token: grant.token, data: { account_id: grant.accountId, binding: "call.#" } });
        other.terminate();
        if (reply.status !== "success") throw new Error("not subscribed");
      });
    }
    await sleep(Math.max(0, ROUND_MS - (performance.now() - roundStart)));
  }
  await sleep(1_000);
  // Events still owed after a second count as failures too.
  m.failures += waiting.size;
  ws.terminate();
  return m;
}

const ms = (values: number[], p: number): string => (values.length ? `${percentile(values, p).toFixed(1)}` : "-");

async function main(): Promise<void> {
  const served = await serve({ args: ["--log-level", "warn"] });
  let child: ChildProcess | null = null;
  try {
    const pid = pidServing(served.dataDir);
    const legit = await demoGrant(served.url, "admin");
    const grants: DemoGrant[] = [];
    for (const user of ["admin", "agent1", "agent2", "agent3"]) grants.push(await demoGrant(served.url, user), await demoGrant(served.url, user));
    const setup: Setup = { url: served.url, grants };
    child = fork(import.meta.filename, ["flooder", JSON.stringify(setup)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await next(child, "ready");

    const rows: string[] = [];
    const created: string[] = [];
    for (const flood of FLOODS) {
      const ws = await subscribedSocket(served.url, legit);
      child.send({ type: "start", flood } satisfies ToFlooder);
      // The flood is set up and takes hold before the client is measured.
      await next(child, "flooding");
      await sleep(1_000);
      const cpuBefore = cpuMs(pid);
      const wallBefore = performance.now();
      const m = await legitimate(served.url, legit, flood, ws);
      const serverCpu = ((cpuMs(pid) - cpuBefore) / (performance.now() - wallBefore)) * 100;
      child.send({ type: "stop" } satisfies ToFlooder);
      const result = await next(child, "result");
      if (result.type !== "result") continue;
      created.push(...m.created);
      const answers = Object.entries(result.answers)
        .map(([k, v]) => `${v.toLocaleString("en")} ${k}`)
        .join("; ");
      rows.push(
        `| ${flood} | ${ms(m.get, 50)} / ${ms(m.get, 99)} | ${ms(m.put, 50)} / ${ms(m.put, 99)} | ${ms(m.event, 50)} / ${ms(m.event, 99)} | ${ms(m.ping, 50)} / ${ms(m.ping, 99)} | ${ms(m.join, 50)} / ${ms(m.join, 99)} | ${serverCpu.toFixed(0)}% | ${result.tried.toLocaleString("en")}: ${answers || "-"} | ${m.fiveXx} | ${m.failures} |`,
      );
      report(`hostile events: ${flood}`, [
        ["client GET p50 / p99", `${ms(m.get, 50)} / ${ms(m.get, 99)} ms (${m.get.length})`],
        ["client PUT p50 / p99", `${ms(m.put, 50)} / ${ms(m.put, 99)} ms (${m.put.length})`],
        ["PUT to its event p50 / p99", `${ms(m.event, 50)} / ${ms(m.event, 99)} ms (${m.event.length})`],
        ["socket ping p50 / p99", `${ms(m.ping, 50)} / ${ms(m.ping, 99)} ms (${m.ping.length})`],
        ["new socket subscribed p50 / p99", `${ms(m.join, 50)} / ${ms(m.join, 99)} ms (${m.join.length})`],
        ["server CPU", `${serverCpu.toFixed(0)}% of one core`],
        ["flood tried", `${result.tried.toLocaleString("en")} (${answers || "-"}); flooder CPU ${(result.cpuMs / 1000).toFixed(1)} s`],
        ["client 5xx / failures", `${m.fiveXx} / ${m.failures}`],
      ]);
    }
    // Every acknowledged creation is still there, and the server never went away.
    const res = await fetch(`${served.url}/v2/accounts/${legit.accountId}/devices?paginate=false`, { headers: { "X-Auth-Token": legit.token } });
    const listed = new Set(((await res.json()) as { data: { id: string }[] }).data.map((d) => d.id));
    const lost = created.filter((id) => !listed.has(id)).length;
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    process.stdout.write(
      [
        "",
        "| flood | GET p50 / p99 ms | PUT p50 / p99 ms | PUT → event p50 / p99 ms | ping p50 / p99 ms | new socket subscribed p50 / p99 ms | server CPU | flood tried: answered | 5xx | client failures |",
        "|---|---|---|---|---|---|---|---|---|---|",
        ...rows,
        "",
        `acknowledged creations: ${created.length.toLocaleString("en")}, lost: ${lost}; server ${alive ? "alive" : "GONE"}`,
        "",
      ].join("\n"),
    );
  } finally {
    child?.kill();
    await served.stop();
  }
}

if (process.argv[2] === "flooder") await flooder(JSON.parse(process.argv[3] ?? "{}") as Setup);
else await main();
