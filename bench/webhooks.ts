// Webhook figures: deliveries per second from the dispatcher to a local receiver (a child process
// on loopback), and the same with one more hook whose receiver never answers, to show in numbers
// that a hung receiver does not slow delivery to the others (rate, and latency at a fixed pace).
import { fork, type ChildProcess } from "node:child_process";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const HOOKS = 10;
const BURST_EVENTS = 1_000;
const PACED_EVENTS_PER_S = 100;
const PACED_SECONDS = 5;
const HANG_TIMEOUT_MS = 2_000;
const ROUNDS = 3;

/** Wall time in milliseconds with sub-millisecond precision, comparable between processes. */
const now = (): number => performance.timeOrigin + performance.now();

interface Arrival {
  path: string;
  call_id: string;
  at: number;
}

// The receiver process: answers 200 to every path but /hang, which it never answers; tells the
// parent what arrived when asked on /stats.
function runReceiver(): void {
  let arrivals: Arrival[] = [];
  const hung = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = (req.url ?? "/").split("?")[0] ?? "/";
      if (path === "/stats") {
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ arrivals, hung: hung.size }));
        arrivals = [];
        return;
      }
      arrivals.push({ path, call_id: new URLSearchParams(Buffer.concat(chunks).toString()).get("call_id") ?? "", at: now() });
      if (path === "/hang") {
        hung.add(res);
        res.on("close", () => hung.delete(res));
        return;
      }
      res.writeHead(200).end();
    });
  });
  server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
}

interface Stats {
  arrivals: Arrival[];
  hung: number;
}

async function stats(base: string): Promise<Stats> {
  return (await (await fetch(`${base}/stats`)).json()) as Stats;
}

const ACCOUNT_CALL = {
  call_direction: "inbound",
  caller_id_name: "Bench Caller",
  caller_id_number: "+14155550100",
  callee_id_name: "Support",
  callee_id_number: "2000",
  request: "2000@bench.switchboard.local",
  to: "2000@bench.switchboard.local",
  from: "+14155550100@bench.switchboard.local",
};

interface Run {
  rate: number;
  p50: number;
  p99: number;
  max: number;
  hung: number;
  hangRequests: number;
}

async function main(): Promise<void> {
  const child: ChildProcess = fork(import.meta.filename, ["receiver"], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  const port = await new Promise<number>((resolve) => child.once("message", (m) => resolve((m as { port: number }).port)));
  const base = `http://127.0.0.1:${port}`;
  const bench = await startBenchServer("hooks", { assetsDir: "", demo: false, webhookTimeoutMs: HANG_TIMEOUT_MS });
  const { server } = bench;
  try {
    const accounts = await server.store.global("accounts");
    const account = await accounts.create({ name: "bench", realm: "bench.switchboard.local", enabled: true });
    const hooks = await server.store.account(account.id, "webhooks");
    for (let i = 0; i < HOOKS; i++) {
      await hooks.create({ name: `bench ${i}`, hook: "channel_create", uri: `${base}/h${i}`, http_verb: "post", retries: 2, enabled: true, format: "form" });
    }
    let seq = 0;
    const sent = new Map<string, number>();
    const publish = (): void => {
      const call_id = `bench-${++seq}`;
      sent.set(call_id, now());
      server.events.bus.publish({ account_id: account.id, routing_key: `call.CHANNEL_CREATE.${call_id}`, name: "CHANNEL_CREATE", data: { ...ACCOUNT_CALL, call_id } });
    };

    const measure = async (events: number, paced: boolean): Promise<Run> => {
      const expected = events * HOOKS;
      const start = now();
      if (paced) {
        for (let i = 0; i < events; i++) {
          publish();
          const next = start + ((i + 1) * 1000) / PACED_EVENTS_PER_S;
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - now())));
        }
      } else {
        for (let i = 0; i < events; i++) publish();
      }
      const arrivals: Arrival[] = [];
      let hung = 0;
      for (let waited = 0; arrivals.filter((a) => a.path !== "/hang").length < expected; waited += 50) {
        if (waited > 120_000) throw new Error(`only ${arrivals.length} of ${expected} deliveries arrived`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        const s = await stats(base);
        arrivals.push(...s.arrivals);
        hung = Math.max(hung, s.hung);
      }
      const delivered = arrivals.filter((a) => a.path !== "/hang");
      const last = Math.max(...delivered.map((a) => a.at));
      const latencies = delivered.map((a) => a.at - (sent.get(a.call_id) ?? a.at));
      return {
        rate: expected / ((last - start) / 1000),
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        max: Math.max(...latencies),
        hung,
        hangRequests: arrivals.length - delivered.length,
      };
    };

    // The hung hook exists from the start, disabled. Each round runs both conditions; the
    // medians over the rounds are reported, so one noisy moment does not decide the comparison.
    const hang = { name: "never answers", hook: "channel_create", uri: `${base}/hang`, http_verb: "post", retries: 2, enabled: false, format: "form" };
    const hangHook = await hooks.create(hang);
    const runs: Record<"clear" | "hung", { burst: Run[]; paced: Run[]; disabled: number }> = {
      clear: { burst: [], paced: [], disabled: 0 },
      hung: { burst: [], paced: [], disabled: 0 },
    };
    await measure(100, false); // warms the connections and the JIT
    for (let round = 0; round < ROUNDS; round++) {
      for (const condition of ["clear", "hung"] as const) {
        const into = runs[condition];
        // Enabled afresh for each run (as the API's re-enable does): six timeouts in 60 s disable it.
        if (condition === "hung") await hooks.update(hangHook.id, { ...hang, enabled: true });
        into.burst.push(await measure(BURST_EVENTS, false));
        into.paced.push(await measure(PACED_EVENTS_PER_S * PACED_SECONDS, true));
        if (condition === "hung") {
          if (hooks.get(hangHook.id)?.data.disable_reason !== undefined) into.disabled++;
          // Off again, and its last request given time to time out, before the next clear run.
          await hooks.update(hangHook.id, hang);
          await new Promise((resolve) => setTimeout(resolve, HANG_TIMEOUT_MS + 500));
        }
      }
    }

    const median = (runs: Run[], pick: (r: Run) => number): number => percentile(runs.map(pick), 50);
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const rate = (v: number) => `${Math.round(v).toLocaleString("en-US")} deliveries/s`;
    const latency = (r: Run[]) => `${ms(median(r, (x) => x.p50))} / ${ms(median(r, (x) => x.p99))} / ${ms(median(r, (x) => x.max))}`;
    const sum = (r: Run[], pick: (x: Run) => number) => r.reduce((a, x) => a + pick(x), 0);
    const hung = [...runs.hung.burst, ...runs.hung.paced];
    report(`webhooks: ${HOOKS} hooks on one account, POST form to a receiver process on loopback, median of ${ROUNDS} rounds`, [
      [`burst of ${BURST_EVENTS.toLocaleString("en-US")} events (${(BURST_EVENTS * HOOKS).toLocaleString("en-US")} deliveries)`, rate(median(runs.clear.burst, (x) => x.rate))],
      [`  same, plus 1 hook that never answers`, rate(median(runs.hung.burst, (x) => x.rate))],
      [`paced ${PACED_EVENTS_PER_S} events/s for ${PACED_SECONDS} s: latency p50 / p99 / max`, latency(runs.clear.paced)],
      [`  same, plus 1 hook that never answers`, latency(runs.hung.paced)],
      [`burst latency p50 / p99 / max`, latency(runs.clear.burst)],
      [`  same, plus 1 hook that never answers`, latency(runs.hung.burst)],
      [`hung hook: requests it got, all runs (${HANG_TIMEOUT_MS / 1000} s timeout each)`, String(sum(hung, (x) => x.hangRequests))],
      [`hung hook: most requests held open at once`, String(Math.max(...hung.map((x) => x.hung)))],
      [`hung hook: runs after which it was auto-disabled`, `${runs.hung.disabled} of ${ROUNDS}`],
    ]);
  } finally {
    await bench.close();
    child.kill();
  }
}

if (process.argv[2] === "receiver") runReceiver();
else await main();
