// Texting figures: sends per second through the texting API (POST /texting/api/send over HTTP,
// Bearer auth, carrier and relay on) and the relay's latency, from the send request leaving the
// client to the relay payload arriving at a receiver (a child process on loopback).
import { fork, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { RunningServer } from "../server/index.js";
import { credentialHashes } from "../server/auth/credentials.js";
import { startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const USERS = 5;
const CONTACTS = 20;
const BURST_SENDS = 2_000;
const CONCURRENCY = 16;
const PACED_PER_S = 50;
const PACED_SECONDS = 5;
const ROUNDS = 3;

/** Wall time in milliseconds with sub-millisecond precision, comparable between processes. */
const now = (): number => performance.timeOrigin + performance.now();

interface Arrival {
  id: string;
  at: number;
}

// The receiver process: answers 200 to every relay payload and remembers when each message came.
function runReceiver(): void {
  let arrivals: Arrival[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/stats") {
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(arrivals));
        arrivals = [];
        return;
      }
      const payload = JSON.parse(Buffer.concat(chunks).toString()) as { MessageID: string };
      arrivals.push({ id: payload.MessageID, at: now() });
      res.writeHead(200).end();
    });
  });
  server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as AddressInfo).port }));
}

interface Sender {
  bearer: string;
  from: string;
}

interface Run {
  sendsPerS: number;
  sendP50: number;
  sendP99: number;
  relayedPerS: number;
  relayP50: number;
  relayP99: number;
}

async function setUp(server: RunningServer, relayUrl: string): Promise<Sender[]> {
  const accounts = await server.store.global("accounts");
  const account = await accounts.create({ name: "bench", realm: "bench.switchboard.local", enabled: true });
  const users = await server.store.account(account.id, "users");
  const senders: Sender[] = [];
  for (let i = 0; i < USERS; i++) {
    const username = `texter${i}`;
    const user = await users.create({ username, first_name: "Bench", last_name: `Texter ${i}`, priv_level: i === 0 ? "admin" : "user", enabled: true, ...credentialHashes(username, "bench") });
    const token = await login(server.url, username);
    const path = `${server.url}/v2/accounts/${account.id}/users/${user.id}/texting`;
    const admin = i === 0 ? token : await login(server.url, "texter0");
    const number = `+1415555${String(7000 + i)}`;
    await post(path, admin, { numbers: [number] });
    const settings = await post(path, token, { relay_url: relayUrl });
    senders.push({ bearer: `Bearer ${settings.account_uid}:${settings.access_token}`, from: number });
  }
  return senders;
}

async function login(base: string, username: string): Promise<string> {
  const res = await fetch(`${base}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: createHash("md5").update(`${username}:bench`).digest("hex"), account_name: "bench" } }),
  });
  return ((await res.json()) as { auth_token: string }).auth_token;
}

async function post(url: string, token: string, data: unknown): Promise<{ account_uid: string; access_token: string }> {
  const res = await fetch(url, { method: "POST", headers: { "X-Auth-Token": token, "Content-Type": "application/json" }, body: JSON.stringify({ data }) });
  if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { data: { account_uid: string; access_token: string } }).data;
}

async function main(): Promise<void> {
  const child: ChildProcess = fork(import.meta.filename, ["receiver"], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  const port = await new Promise<number>((resolve) => child.once("message", (m) => resolve((m as { port: number }).port)));
  const receiver = `http://127.0.0.1:${port}`;
  const bench = await startBenchServer("texting", { assetsDir: "", demo: false });
  const { server } = bench;
  try {
    const senders = await setUp(server, `${receiver}/relay`);
    let n = 0;
    const started = new Map<string, number>();
    const send = async (): Promise<number> => {
      const i = n++;
      const sender = senders[i % senders.length] as Sender;
      const at = now();
      const res = await fetch(`${server.url}/texting/api/send`, {
        method: "POST",
        headers: { Authorization: sender.bearer, "Content-Type": "application/json" },
        body: JSON.stringify({ to: `+1415555${String(8000 + (i % CONTACTS))}`, from: sender.from, message: `bench message ${i}` }),
      });
      const body = (await res.json()) as { messageId?: string; errors?: string[] };
      if (res.status !== 200 || body.messageId === undefined) throw new Error(`send answered ${res.status}: ${JSON.stringify(body)}`);
      started.set(body.messageId, at);
      return now() - at;
    };

    const measure = async (count: number, paced: boolean): Promise<Run> => {
      started.clear();
      const sendTimes: number[] = [];
      const start = now();
      if (paced) {
        const pending: Promise<void>[] = [];
        for (let i = 0; i < count; i++) {
          pending.push(send().then((t) => void sendTimes.push(t)));
          const next = start + ((i + 1) * 1000) / PACED_PER_S;
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - now())));
        }
        await Promise.all(pending);
      } else {
        let left = count;
        await Promise.all(
          Array.from({ length: CONCURRENCY }, async () => {
            while (left-- > 0) sendTimes.push(await send());
          }),
        );
      }
      const sentAt = now();
      const arrivals: Arrival[] = [];
      for (let waited = 0; arrivals.length < count; waited += 50) {
        if (waited > 120_000) throw new Error(`only ${arrivals.length} of ${count} relays arrived`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        arrivals.push(...((await (await fetch(`${receiver}/stats`)).json()) as Arrival[]));
      }
      const last = Math.max(...arrivals.map((a) => a.at));
      const latencies = arrivals.map((a) => a.at - (started.get(a.id) ?? a.at));
      return {
        sendsPerS: count / ((sentAt - start) / 1000),
        sendP50: percentile(sendTimes, 50),
        sendP99: percentile(sendTimes, 99),
        relayedPerS: count / ((last - start) / 1000),
        relayP50: percentile(latencies, 50),
        relayP99: percentile(latencies, 99),
      };
    };

    await measure(200, false); // warms the connections and the JIT
    const bursts: Run[] = [];
    const paced: Run[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      bursts.push(await measure(BURST_SENDS, false));
      paced.push(await measure(PACED_PER_S * PACED_SECONDS, true));
    }
    const median = (runs: Run[], pick: (r: Run) => number): number => percentile(runs.map(pick), 50);
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    const rate = (v: number, unit: string) => `${Math.round(v).toLocaleString("en-US")} ${unit}/s`;
    report(`texting: ${USERS} users each with a relay URL (receiver process on loopback), ${CONTACTS} contacts, median of ${ROUNDS} rounds`, [
      [`burst of ${BURST_SENDS.toLocaleString("en-US")} sends, ${CONCURRENCY} at a time`, rate(median(bursts, (r) => r.sendsPerS), "sends")],
      [`  send answer p50 / p99`, `${ms(median(bursts, (r) => r.sendP50))} / ${ms(median(bursts, (r) => r.sendP99))}`],
      [`  relays arrived`, rate(median(bursts, (r) => r.relayedPerS), "relays")],
      [`  relay latency p50 / p99 (send request to arrival)`, `${ms(median(bursts, (r) => r.relayP50))} / ${ms(median(bursts, (r) => r.relayP99))}`],
      [`paced ${PACED_PER_S} sends/s for ${PACED_SECONDS} s: send answer p50 / p99`, `${ms(median(paced, (r) => r.sendP50))} / ${ms(median(paced, (r) => r.sendP99))}`],
      [`  relay latency p50 / p99`, `${ms(median(paced, (r) => r.relayP50))} / ${ms(median(paced, (r) => r.relayP99))}`],
    ]);
  } finally {
    await bench.close();
    child.kill();
  }
}

if (process.argv[2] === "receiver") runReceiver();
else await main();
