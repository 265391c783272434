// The supervisor board at the size (issue 20, figures): the built server in serve mode with
// 50 queues and 500 recipients (10 members a queue, everyone logged in), the built console in
// Debian Chromium signed in as the admin on the Supervisor view, and 200 recipient events a second
// for BENCH_SECONDS (default 20) made by real state changes (Ready/Away through the REST API, one
// callq.recipient event each, and the board's own reads that follow). Measured in the page: the
// time between animation frames (requestAnimationFrame deltas) and long tasks (PerformanceObserver);
// the same figures for the board idle just before, on the same machine, side by side; and that the
// board showed every recipient's last state at the end. BENCH_QUEUES and BENCH_RECIPIENTS change
// the size, BENCH_PROFILE=1 adds the page's CPU time by function.
import { createHash } from "node:crypto";
import { loadavg } from "node:os";
import type { Page } from "playwright-core";
import { launchBrowser } from "../test/helpers/browser.js";
import { serve } from "../test/helpers/serve.js";
import { percentile, report } from "./report.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const RATE = Number(process.env.BENCH_EVENTS_PER_S ?? 200);
const QUEUES = Number(process.env.BENCH_QUEUES ?? 50);
const RECIPIENTS = Number(process.env.BENCH_RECIPIENTS ?? 500);
/** Requests the set-up keeps in flight. */
const SETUP_CONCURRENCY = 8;
/** BENCH_PROFILE=1: also print where the page's main thread spent its time (CPU profile, self time). */
const PROFILE = process.env.BENCH_PROFILE === "1";

interface Grant {
  token: string;
  accountId: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work` over `items`, `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: limit }, async () => {
    while (next < items.length) {
      const i = next++;
      const item = items[i];
      if (item !== undefined) await work(item, i);
    }
  });
  await Promise.all(lanes);
}

interface Probe {
  deltas: number[];
  longTasks: number[];
}

// Page-side code as text: tsx's transform would wrap named functions in a helper the page lacks.
const START_PROBE = `(() => {
  const probe = { deltas: [], longTasks: [], running: true };
  window.boardProbe = probe;
  let last = performance.now();
  const tick = (t) => {
    probe.deltas.push(t - last);
    last = t;
    if (probe.running) requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  probe.observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) probe.longTasks.push(entry.duration);
  });
  probe.observer.observe({ type: "longtask", buffered: false });
})()`;

const STOP_PROBE = `(() => {
  const p = window.boardProbe;
  p.running = false;
  p.observer.disconnect();
  return { deltas: p.deltas, longTasks: p.longTasks };
})()`;

function frameStats(probe: Probe): [string, string][] {
  const deltas = probe.deltas.slice(1);
  const over50 = deltas.filter((d) => d > 50).length;
  return [
    ["frames", String(deltas.length)],
    ["frame interval p50 / p95 / p99", `${percentile(deltas, 50).toFixed(1)} / ${percentile(deltas, 95).toFixed(1)} / ${percentile(deltas, 99).toFixed(1)} ms`],
    ["frame interval max", `${Math.max(...deltas).toFixed(1)} ms`],
    ["frames over 50 ms", `${over50} (${((100 * over50) / Math.max(1, deltas.length)).toFixed(2)} %)`],
    ["long tasks (> 50 ms)", probe.longTasks.length === 0 ? "none" : `${probe.longTasks.length}, max ${Math.max(...probe.longTasks).toFixed(0)} ms`],
  ];
}

const server = await serve();
const launched = await launchBrowser();
try {
  const call = async <T>(method: string, path: string, token: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { Accept: "application/json", "Content-Type": "application/json" };
    if (token !== "") headers["X-Auth-Token"] = token;
    const res = await fetch(server.url + path, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify({ data: body }) }) });
    const envelope = (await res.json()) as { data: T; auth_token?: string };
    if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(envelope)}`);
    return (method === "PUT" && path === "/v2/user_auth" ? { ...envelope.data, token: envelope.auth_token } : envelope.data) as T;
  };

  const credentials = createHash("md5").update("admin:switchboard").digest("hex");
  const auth = await call<{ account_id: string; token: string }>("PUT", "/v2/user_auth", "", { credentials, account_name: "demo" });
  const admin: Grant = { token: auth.token, accountId: auth.account_id };
  const account = `/v2/accounts/${admin.accountId}`;

  // QUEUES queues and RECIPIENTS recipients: the demo's and enough new ones, RECIPIENTS / QUEUES
  // members a queue, all logged in.
  const existing = await call<{ id: string }[]>("GET", `${account}/callq_recipients?paginate=false`, admin.token);
  const ids = existing.map((r) => r.id);
  const more = Array.from({ length: Math.max(0, RECIPIENTS - ids.length) }, (_, i) => ids.length + i);
  await eachLimited(more, SETUP_CONCURRENCY, async (i) => {
    const user = await call<{ id: string }>("PUT", `${account}/users`, admin.token, {
      username: `bench${i}`,
      first_name: "Bench",
      last_name: `Agent ${i}`,
      password: "switchboard",
      callq: { enabled: true, permissions: [] },
    });
    ids.push(user.id);
  });
  const queues = await call<{ id: string; name: string }[]>("GET", `${account}/callq_queues?paginate=false`, admin.token);
  const moreQueues = Array.from({ length: Math.max(0, QUEUES - queues.length) }, (_, i) => queues.length + i + 1);
  await eachLimited(moreQueues, SETUP_CONCURRENCY, async (n) => {
    queues.push(await call<{ id: string; name: string }>("PUT", `${account}/callq_queues`, admin.token, { name: `Queue ${String(n).padStart(2, "0")}` }));
  });
  const perQueue = Math.ceil(ids.length / queues.length);
  await eachLimited(queues, SETUP_CONCURRENCY, async (queue, q) => {
    const members = ids.slice(q * perQueue, (q + 1) * perQueue);
    if (members.length > 0) await call("POST", `${account}/callq_queues/${queue.id}/recipients`, admin.token, { action: "set", members });
  });
  await eachLimited(ids, SETUP_CONCURRENCY, async (id) => {
    await call("POST", `${account}/callq_recipients/${id}/status`, admin.token, { status: "login" });
  });

  const page: Page = await launched.browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(server.url);
  await page.getByLabel("Account name", { exact: true }).fill("demo");
  await page.getByLabel("Username", { exact: true }).fill("admin");
  await page.getByLabel("Password", { exact: true }).fill("switchboard");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Console views" }).getByRole("link", { name: "Supervisor" }).click();
  // A board of many agents renders the rows in view: the table's row count says all are there.
  await page.locator(`table[aria-rowcount="${ids.length + 1}"] tr[data-recipient-id]`).first().waitFor({ timeout: 60_000 });
  await page.locator("section[data-queue-id]").nth(queues.length - 1).waitFor({ timeout: 60_000 });
  await sleep(1000);

  // Where the page's main thread spends its time (Chromium's own counters, seconds): script,
  // style, layout, and all tasks.
  const metrics = await page.context().newCDPSession(page);
  await metrics.send("Performance.enable");
  const mainThread = async (): Promise<Record<string, number>> => {
    const { metrics: list } = await metrics.send("Performance.getMetrics");
    return Object.fromEntries(list.map((m) => [m.name, m.value]));
  };
  const spent = (from: Record<string, number>, to: Record<string, number>, seconds: number): string =>
    ["ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration"]
      .map((name) => `${name.replace("Duration", "").replace("RecalcStyle", "style").toLowerCase()} ${((100 * ((to[name] ?? 0) - (from[name] ?? 0))) / seconds).toFixed(0)}%`)
      .join(", ");

  // The same board with no events first, on the same machine: what its frames look like idle
  // (on a machine shared with other work, the difference is the board's doing).
  const idleFrom = await mainThread();
  await page.evaluate(START_PROBE);
  await sleep((SECONDS * 1000) / 2);
  const idle = (await page.evaluate(STOP_PROBE)) as Probe;
  const idleSpent = spent(idleFrom, await mainThread(), SECONDS / 2);
  const idleLoad = loadavg()[0] ?? 0;
  const busyFrom = await mainThread();
  await page.evaluate(START_PROBE);

  const cdp = PROFILE ? await page.context().newCDPSession(page) : null;
  if (cdp !== null) {
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.start");
  }

  // Events: each tick flips the next recipient between Ready and Away; requests run paced,
  // several in flight, so the server publishes RATE recipient events a second.
  const last = new Map<string, "ready" | "away">();
  const total = RATE * SECONDS;
  const started = Date.now();
  let sent = 0;
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  for (let n = 0; n < total; n++) {
    const due = started + (n * 1000) / RATE;
    const wait = due - Date.now();
    if (wait > 0) await sleep(wait);
    const id = ids[n % ids.length] ?? "";
    const status = last.get(id) === "ready" ? "away" : "ready";
    last.set(id, status);
    const request = call("POST", `${account}/callq_recipients/${id}/status`, admin.token, { status })
      .then(() => void (sent += 1))
      .catch(() => void (failed += 1));
    const tracked: Promise<void> = request.finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
    if (inFlight.size >= 32) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const elapsedS = (Date.now() - started) / 1000;

  const probe = (await page.evaluate(STOP_PROBE)) as Probe;
  const busySpent = spent(busyFrom, await mainThread(), elapsedS);
  const busyLoad = loadavg()[0] ?? 0;

  if (cdp !== null) {
    const { profile } = await cdp.send("Profiler.stop");
    const interval = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples?.length ?? 1);
    const self = new Map<string, number>();
    for (const node of profile.nodes) {
      const f = node.callFrame;
      const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").pop() ?? ""}:${f.lineNumber}`;
      self.set(key, (self.get(key) ?? 0) + (node.hitCount ?? 0) * interval);
    }
    const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 15);
    report("page CPU by function (self ms)", top.map(([k, v]) => [k, v.toFixed(0)]));
  }

  // The board shows every recipient's final state (in the rows it renders: those in view).
  const expected = new Map([...last].map(([id, s]) => [id, s === "ready" ? "Ready" : "Away"]));
  const settledAt = Date.now();
  for (;;) {
    const shown = await page.$$eval("tr[data-recipient-id]", (rows) => rows.map((r) => [r.getAttribute("data-recipient-id") ?? "", r.getAttribute("data-state") ?? ""]));
    const wrong = shown.filter(([id, state]) => expected.has(id) && expected.get(id) !== state).length;
    if (wrong === 0) break;
    if (Date.now() - settledAt > 10_000) throw new Error(`${wrong} recipients still show an old state 10 s after the last event`);
    await sleep(50);
  }
  const settleMs = Date.now() - settledAt;

  const quiet = frameStats(idle);
  const loaded = frameStats(probe);
  report(`board: supervisor board, ${queues.length} queues, ${ids.length} recipients, ${RATE} events/s for ${SECONDS} s (idle: ${SECONDS / 2} s before)`, [
    ["events sent (one per state change)", `${sent} in ${elapsedS.toFixed(1)} s = ${(sent / elapsedS).toFixed(0)}/s (${failed} failed)`],
    ...loaded.map(([k, v], i): [string, string] => [k, `${v}   (idle: ${quiet[i]?.[1] ?? "?"})`]),
    ["main thread busy (share of the window)", `${busySpent}   (idle: ${idleSpent})`],
    ["board right after the last event", `${settleMs} ms`],
    ["load average (1 min), idle / under events", `${idleLoad.toFixed(2)} / ${busyLoad.toFixed(2)}`],
  ]);
  await page.close();
} finally {
  await launched.close();
  await server.stop();
}
