// Event websocket fan-out: 500 subscribers of one account (in a child process, so they do not
// share the server's event loop) while the bus publishes at a steady rate for 10 s, at two rates;
// figures are events delivered per second across subscribers and publish-to-receipt p50 / p99.
import { fork, type ChildProcess } from "node:child_process";
import { performance } from "node:perf_hooks";
import WebSocket from "ws";
import type { RunningServer } from "../server/index.js";
import { benchLogin, startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 500);
const RATES = (process.env.BENCH_EVENTS_RATES ?? "20,100").split(",").map(Number);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const BINDING = "call.CHANNEL_CREATE.*";
/** After publishing stops, the subscribers get this long to receive what they are still owed. */
const DRAIN_MS = 3_000;

/** Milliseconds on a clock both processes share (the wall clock, at sub-millisecond resolution). */
const now = (): number => performance.timeOrigin + performance.now();

type ToClients = { type: "report" } | { type: "exit" };
type FromClients = { type: "ready" } | ({ type: "result" } & PhaseResult);

interface PhaseResult {
  received: number;
  closed: number;
  p50: number;
  p99: number;
  max: number;
  lastAt: number;
  cpuMs: number;
}

interface Setup {
  url: string;
  token: string;
  accountId: string;
}

/** Child mode: open the subscribers, record each event's latency, report (and start afresh) when asked. */
async function clients(setup: Setup): Promise<void> {
  const send = (m: FromClients): void => void process.send?.(m);
  let latencies: number[] = [];
  let lastAt = 0;
  let closed = 0;
  const sockets = await Promise.all(
    Array.from(
      { length: SUBSCRIBERS },
      () =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(setup.url);
          ws.once("error", reject);
          ws.once("open", () => {
            ws.once("message", () => resolve(ws));
            ws.send(JSON.stringify({ action: "subscribe", auth_token: setup.token, data: { account_id: setup.accountId, binding: BINDING } }));
          });
        }),
    ),
  );
  for (const ws of sockets) {
    ws.on("message", (raw) => {
      const at = now();
      const message = JSON.parse(raw.toString()) as { action: string; data: { sent_at?: number } };
      if (message.action !== "event" || message.data.sent_at === undefined) return;
      latencies.push(at - message.data.sent_at);
      lastAt = at;
    });
    ws.on("close", () => closed++);
  }
  let cpuBefore = process.cpuUsage();
  process.on("message", (m: ToClients) => {
    if (m.type === "exit") {
      for (const ws of sockets) ws.terminate();
      process.disconnect();
      return;
    }
    const cpu = process.cpuUsage(cpuBefore);
    send({
      type: "result",
      received: latencies.length,
      closed,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: percentile(latencies, 100),
      lastAt,
      cpuMs: (cpu.user + cpu.system) / 1000,
    });
    latencies = [];
    cpuBefore = process.cpuUsage();
  });
  send({ type: "ready" });
}

function nextMessage(child: ChildProcess, type: FromClients["type"], timeoutMs: number): Promise<FromClients> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} from the subscribers within ${timeoutMs} ms`)), timeoutMs);
    const onMessage = (m: FromClients): void => {
      if (m.type !== type) return;
      clearTimeout(timer);
      child.off("message", onMessage);
      resolve(m);
    };
    child.on("message", onMessage);
  });
}

/** Publishes `rate` events a second for DURATION_S, then collects what the subscribers saw. */
async function phase(server: RunningServer, child: ChildProcess, accountId: string, rate: number): Promise<void> {
  const total = rate * DURATION_S;
  const cpuBefore = process.cpuUsage();
  const started = now();
  let published = 0;
  // A tick every 10 ms publishes what is due by then: a steady rate without a timer per event.
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(total, Math.floor(((now() - started) / 1000) * rate));
      for (; published < due; published++) {
        server.events.bus.publish({
          account_id: accountId,
          routing_key: `call.CHANNEL_CREATE.bench${published}`,
          name: "CHANNEL_CREATE",
          data: { call_id: `bench${published}`, call_direction: "inbound", caller_id_number: "+15550100", sent_at: now() },
        });
      }
      if (published >= total) {
        clearInterval(tick);
        resolve();
      }
    }, 10);
  });
  const publishedFor = now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await new Promise((r) => setTimeout(r, DRAIN_MS));
  child.send({ type: "report" } satisfies ToClients);
  const result = await nextMessage(child, "result", 30_000);
  if (result.type !== "result") return;

  const expected = total * SUBSCRIBERS;
  const span = result.lastAt - started;
  report(`Event websocket fan-out: ${SUBSCRIBERS} subscribers of one account, ${rate} events/s for ${DURATION_S} s`, [
    ["events published", `${total.toLocaleString("en")} in ${(publishedFor / 1000).toFixed(1)} s`],
    ["events delivered", `${result.received.toLocaleString("en")} of ${expected.toLocaleString("en")}${result.closed ? `; ${result.closed} subscribers dropped` : ""}`],
    ["delivered per second, all subscribers", `${Math.round(result.received / (span / 1000)).toLocaleString("en")} events/s`],
    ["publish to receipt p50", `${result.p50.toFixed(1)} ms`],
    ["publish to receipt p99", `${result.p99.toFixed(1)} ms`],
    ["publish to receipt max", `${result.max.toFixed(1)} ms`],
    ["server process CPU while publishing", `${(((cpu.user + cpu.system) / 1000 / publishedFor) * 100).toFixed(0)} % of one core`],
    ["subscriber process CPU", `${((result.cpuMs / span) * 100).toFixed(0)} % of one core`],
  ]);
}

async function main(): Promise<void> {
  // All subscribers share one token and connect at once: the socket caps are raised to take them
  // (a quarter of the sockets may wait for their subscription at one time).
  const bench = await startBenchServer("events", {
    logLevel: "warn",
    eventSockets: { maxSockets: 4 * SUBSCRIBERS, maxPerAccount: SUBSCRIBERS, maxPerToken: SUBSCRIBERS },
  });
  const { server } = bench;
  let child: ChildProcess | null = null;
  try {
    const auth = await benchLogin(server.url);
    const setup: Setup = { url: `${server.url.replace(/^http/, "ws")}/events`, token: auth.token, accountId: auth.accountId };
    child = fork(import.meta.filename, ["clients", JSON.stringify(setup)], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    await nextMessage(child, "ready", 60_000);
    for (const rate of RATES) await phase(server, child, setup.accountId, rate);
    child.send({ type: "exit" } satisfies ToClients);
  } finally {
    child?.kill();
    await bench.close();
  }
}

if (process.argv[2] === "clients") await clients(JSON.parse(process.argv[3] ?? "{}") as Setup);
else await main();
