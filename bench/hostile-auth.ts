// A login flood against serve mode (issue 14, item 1): autocannon in a child process sends wrong
// passwords for the demo account under many spellings of its identity (1-001, (1001), 1001a, DEMO
// ...) from 16 connections, while this process, as the real user, signs in with the right
// password and reads a device with the token, one pair every 50 ms. The same user alone first, for
// the side-by-side. Figures: the user's p50/p99 for each request, the server's CPU, requests
// tried, their answers, 5xx seen and how often the right password was refused (must be 0).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { percentile, report } from "./report.js";
import { waitForLine, cpuMs } from "./lib/process.js";

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const FLOOD_CONNECTIONS = 16;
const USER_PERIOD_MS = 50;
const md5 = (text: string) => createHash("md5").update(text).digest("hex");

const SPELLINGS = [
  { phone_number: "1-001" },
  { phone_number: "(1001)" },
  { phone_number: "1001a" },
  { phone_number: " 1001 " },
  { phone_number: "1.0.0.1" },
  { account_name: "DEMO" },
  { account_name: "Demo" },
  { account_realm: "DEMO.switchboard.local" },
];

interface FloodResult {
  requests: number;
  byStatus: Record<string, number>;
  errors: number;
}

/** The flood itself, run as `hostile-auth.ts flood <url> <seconds>` in a child process. */
async function flood(url: string, seconds: number): Promise<void> {
  let n = 0;
  const byStatus: Record<string, number> = {};
  const instance = autocannon({
    url: `${url}/v2/user_auth`,
    connections: FLOOD_CONNECTIONS,
    duration: seconds,
    requests: [
      {
        method: "PUT",
        headers: { "Content-Type": "application/json" },
        setupRequest: (request) => {
          n++;
          const names = SPELLINGS[n % SPELLINGS.length];
          return { ...request, body: JSON.stringify({ data: { credentials: md5(`agent${n % 3}:guess-${n}`), ...names } }) };
        },
        onResponse: (status) => {
          byStatus[status] = (byStatus[status] ?? 0) + 1;
        },
      },
    ],
  });
  const result = await instance;
  const out: FloodResult = { requests: result.requests.total, byStatus, errors: result.errors + result.timeouts };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}


interface UserRun {
  login: number[];
  read: number[];
  refused: number;
  fiveHundreds: number;
}

/** The real user for `seconds`: right-password login, then a device read with the token. */
async function realUser(url: string, seconds: number, deviceId: string, accountId: string): Promise<UserRun> {
  const run: UserRun = { login: [], read: [], refused: 0, fiveHundreds: 0 };
  const end = Date.now() + seconds * 1000;
  while (Date.now() < end) {
    const started = performance.now();
    const login = await fetch(`${url}/v2/user_auth`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ data: { credentials: md5("agent1:switchboard"), phone_number: "1002" } }),
    });
    const loggedIn = performance.now();
    run.login.push(loggedIn - started);
    const body = (await login.json()) as { auth_token?: string };
    if (login.status >= 500) run.fiveHundreds++;
    if (login.status !== 201 || body.auth_token === undefined) {
      run.refused++;
    } else {
      const read = await fetch(`${url}/v2/accounts/${accountId}/devices/${deviceId}`, { headers: { "X-Auth-Token": body.auth_token } });
      await read.arrayBuffer();
      run.read.push(performance.now() - loggedIn);
      if (read.status >= 500) run.fiveHundreds++;
    }
    const left = USER_PERIOD_MS - (performance.now() - started);
    if (left > 0) await new Promise((r) => setTimeout(r, left));
  }
  return run;
}


async function main(): Promise<void> {
  const dataDir = await mkdtemp(join(tmpdir(), "sb-bench-hostile-auth-"));
  const server = spawn(process.execPath, [join(import.meta.dirname, "../out/main/server.js"), "--port", "0", "--events-port", "0", "--data-dir", dataDir, "--log-level", "warn"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  try {
    const url = (await waitForLine(server, /Switchboard is serving http:\/\/127\.0\.0\.1:[1-9]\d*/)).replace("Switchboard is serving ", "");
    const admin = await fetch(`${url}/v2/user_auth`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ data: { credentials: md5("admin:switchboard"), account_name: "demo" } }),
    });
    const auth = (await admin.json()) as { auth_token: string; data: { account_id: string } };
    const list = await fetch(`${url}/v2/accounts/${auth.data.account_id}/devices`, { headers: { "X-Auth-Token": auth.auth_token } });
    const deviceId = ((await list.json()) as { data: { id: string }[] }).data[0]?.id ?? "";
    const pid = server.pid ?? 0;

    const quietCpu = cpuMs(pid) / 1000;
    const quietStart = performance.now();
    const quiet = await realUser(url, DURATION_S, deviceId, auth.data.account_id);
    const quietCpuShare = (cpuMs(pid) / 1000 - quietCpu) / ((performance.now() - quietStart) / 1000);

    const child = spawn(process.execPath, ["--import", "tsx", import.meta.filename, "flood", url, String(DURATION_S)], { stdio: ["ignore", "pipe", "inherit"] });
    let floodOut = "";
    child.stdout.on("data", (c: Buffer) => (floodOut += c.toString()));
    const floodExit = new Promise((resolve) => child.once("exit", resolve));
    // autocannon starts within a few hundred ms of the spawn; the user runs over the same span.
    await new Promise((r) => setTimeout(r, 500));
    const floodCpu = cpuMs(pid) / 1000;
    const floodStart = performance.now();
    const flooded = await realUser(url, DURATION_S - 1, deviceId, auth.data.account_id);
    const floodCpuShare = (cpuMs(pid) / 1000 - floodCpu) / ((performance.now() - floodStart) / 1000);
    await floodExit;
    const result = JSON.parse(floodOut.trim().split("\n").at(-1) ?? "{}") as FloodResult;
    const fiveHundreds = Object.entries(result.byStatus)
      .filter(([s]) => Number(s) >= 500)
      .reduce((sum, [, n]) => sum + n, 0);
    const stillUp = await fetch(`${url}/v2/token_auth`, { headers: { "X-Auth-Token": auth.auth_token } });

    const ms = (values: number[], p: number) => `${percentile(values, p).toFixed(1)} ms`;
    const side = (label: string, pick: (r: UserRun) => number[]) =>
      [label, `alone p50 ${ms(pick(quiet), 50)} p99 ${ms(pick(quiet), 99)} | under the flood p50 ${ms(pick(flooded), 50)} p99 ${ms(pick(flooded), 99)}`] as [string, string];
    report(`login flood (${FLOOD_CONNECTIONS} connections of wrong passwords in ${SPELLINGS.length} spellings, ${DURATION_S} s; the real user every ${USER_PERIOD_MS} ms)`, [
      side("real user: right-password login", (r) => r.login),
      side("real user: device read with its token", (r) => r.read),
      ["real user: logins (alone / flood)", `${quiet.login.length} / ${flooded.login.length}`],
      ["real user: right password refused", `${quiet.refused + flooded.refused}`],
      ["real user: 5xx", `${quiet.fiveHundreds + flooded.fiveHundreds}`],
      ["flood: requests tried", `${result.requests} (${(result.requests / DURATION_S).toFixed(0)}/s)`],
      ["flood: answers", Object.entries(result.byStatus).map(([s, n]) => `${s}: ${n}`).join(", ")],
      ["flood: 5xx / socket errors", `${fiveHundreds} / ${result.errors}`],
      ["server CPU (alone / flood)", `${(quietCpuShare * 100).toFixed(0)}% / ${(floodCpuShare * 100).toFixed(0)}% of a core`],
      ["server still answering afterwards", `${stillUp.status === 200 ? "yes" : `no (${stillUp.status})`}, crashed: ${server.exitCode === null ? "no" : "yes"}`],
    ]);
  } finally {
    server.kill("SIGTERM");
    await new Promise((r) => server.once("exit", r));
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[2] === "flood") await flood(process.argv[3] ?? "", Number(process.argv[4] ?? DURATION_S));
else await main();
