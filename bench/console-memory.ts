// The console's memory over a shift (issue 7): the built console (out/renderer: run `npm run build`
// first) in Chromium, signed in as agent1 on an in-process server, takes BENCH_CALLS (default 100)
// calls in a row from a simulated caller: Accept (Alt+A), about a second of the caller's tone,
// hang up (Alt+E), back to the idle view. After call 10 and after the last call the bench waits
// for sip.js to let go of the calls' transactions (Timer L, 32 s after the answer, keeps each
// call's objects until then), forces garbage collection and reads the page's JS heap (CDP
// Performance.getMetrics JSHeapUsedSize) and DOM nodes (in the document, and all V8 still holds,
// detached ones included); the growth between the two is the figure (no more than 10%).
// BENCH_EVERY=n adds a sample every n calls; BENCH_SNAPSHOT=<dir> writes heap snapshots at both
// points and prints what grew between them, by constructor, for a leak hunt.
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { CDPSession, Page } from "playwright-core";
import { launchBrowser } from "../test/helpers/browser.js";
import { CONSOLE_DIR, signIn, waitRegistered } from "../test/helpers/console-page.js";
import { benchLogin, startBenchServer } from "./lib/server.js";
import { report } from "./report.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const EVERY = Number(process.env.BENCH_EVERY ?? 0);
const SNAPSHOT_DIR = process.env.BENCH_SNAPSHOT;
const FIRST = 10;
const AGENT_EXTENSION = "1002";
const TALK_MS = 1_000;
/** sip.js's Timer L (64 × T1) holds an answered INVITE's server transaction, and with it the call. */
const SIP_TIMER_L_MS = 32_000;

interface Sample {
  call: number;
  heap: number;
  /** Nodes V8 keeps alive (Performance.getMetrics "Nodes"), detached ones included. */
  nodes: number;
  /** Elements in the document now. */
  documentNodes: number;
  listeners: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function sample(cdp: CDPSession, page: Page, call: number): Promise<Sample> {
  // Twice: objects freed by the first collection's finalizers go in the second.
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { metrics } = await cdp.send("Performance.getMetrics");
  const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? Number.NaN;
  const documentNodes: unknown = await page.evaluate("document.getElementsByTagName('*').length");
  return {
    call,
    heap: metric("JSHeapUsedSize"),
    nodes: metric("Nodes"),
    documentNodes: typeof documentNodes === "number" ? documentNodes : Number.NaN,
    listeners: metric("JSEventListeners"),
  };
}

async function snapshot(cdp: CDPSession, file: string): Promise<void> {
  const out = createWriteStream(file);
  const onChunk = ({ chunk }: { chunk: string }) => out.write(chunk);
  cdp.on("HeapProfiler.addHeapSnapshotChunk", onChunk);
  await cdp.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
  cdp.off("HeapProfiler.addHeapSnapshotChunk", onChunk);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  console.log(`heap snapshot: ${file}`);
}

function snapshotFile(call: number): string {
  return join(SNAPSHOT_DIR ?? ".", `console-after-${call}.heapsnapshot`);
}

interface HeapSnapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Count and self size per "type:constructor" (strings lumped together), from a heap snapshot file. */
async function bySelfSize(file: string): Promise<Map<string, { count: number; bytes: number }>> {
  const heap = JSON.parse(await readFile(file, "utf8")) as HeapSnapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const totals = new Map<string, { count: number; bytes: number }>();
  for (let i = 0; i < heap.nodes.length; i += fields.length) {
    const type = types[heap.nodes[i + (typeAt ?? 0)] ?? 0] ?? "?";
    const key = type.includes("string") ? "string" : `${type}:${(heap.strings[heap.nodes[i + (nameAt ?? 0)] ?? 0] ?? "").slice(0, 70)}`;
    const total = totals.get(key) ?? { count: 0, bytes: 0 };
    total.count++;
    total.bytes += heap.nodes[i + (sizeAt ?? 0)] ?? 0;
    totals.set(key, total);
  }
  return totals;
}

/**
 * What grew between two snapshots, largest first, after two totals: V8's compiled code (it grows
 * as the optimising tiers compile functions that run hot, up to the page's own code) and the rest.
 */
async function growthByConstructor(before: string, after: string): Promise<[string, string][]> {
  const [a, b] = [await bySelfSize(before), await bySelfSize(after)];
  const grown = [...b]
    .map(([key, { count, bytes }]) => ({ key, count: count - (a.get(key)?.count ?? 0), bytes: bytes - (a.get(key)?.bytes ?? 0) }))
    .sort((x, y) => y.bytes - x.bytes);
  const kib = (bytes: number) => `${bytes >= 0 ? "+" : ""}${(bytes / 1024).toFixed(1)} KiB`;
  const sum = (code: boolean) => grown.filter((g) => g.key.startsWith("code:") === code).reduce((total, g) => total + g.bytes, 0);
  return [
    ["all compiled code (code:*)", kib(sum(true))],
    ["everything else", kib(sum(false))],
    ...grown.map(({ key, count, bytes }): [string, string] => [key, `${count >= 0 ? "+" : ""}${count}, ${kib(bytes)}`]),
  ];
}

const bench = await startBenchServer("console-memory", { rendererDir: CONSOLE_DIR });
const server = bench.server;
const browser = await launchBrowser();
try {
  const admin = await benchLogin(server.url);

  // Not openConsole(): its init script keeps every RTCPeerConnection for the audio checks, which
  // would hold each call's connection (and sip.js's listeners on it) alive here.
  const page = await browser.browser.newPage({ viewport: { width: 1280, height: 860 } });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(server.url);
  await signIn(page, "agent1");
  await waitRegistered(page);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const idle = page.getByText("No calls right now.");
  await idle.waitFor();

  const samples: Sample[] = [await sample(cdp, page, 0)];
  const started = Date.now();
  for (let i = 1; i <= CALLS; i++) {
    const res = await fetch(`${server.url}/v2/accounts/${admin.accountId}/sim/calls`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Auth-Token": admin.token },
      body: JSON.stringify({
        data: { to: AGENT_EXTENSION, caller_id_name: `Caller ${i}`, caller_id_number: `+1415555${String(i).padStart(4, "0")}`, audio: "tone_stream://%(1000,0,1200)" },
      }),
    });
    if (res.status !== 201) throw new Error(`sim call ${i} refused: ${res.status} ${await res.text()}`);
    await page.getByRole("button", { name: "Accept" }).waitFor({ timeout: 20_000 });
    await page.keyboard.press("Alt+KeyA");
    await page.locator(".active-call .call-state", { hasText: "Connected" }).waitFor({ timeout: 20_000 });
    await sleep(TALK_MS);
    await page.keyboard.press("Alt+KeyE");
    await idle.waitFor({ timeout: 20_000 });
    await until("the call to end on the server", () => (server.calls.channels.size === 0 ? true : undefined));
    if (i === FIRST || i === CALLS || (EVERY > 0 && i % EVERY === 0)) {
      // What stays, not what is still in flight: sip.js's transactions end, and the recent-calls
      // refresh (400 ms after the call's record) lands.
      await sleep(SIP_TIMER_L_MS + 2_000);
      const s = await sample(cdp, page, i);
      samples.push(s);
      console.log(`call ${i}: heap ${(s.heap / 2 ** 20).toFixed(2)} MiB, nodes ${s.nodes} (document ${s.documentNodes}), listeners ${s.listeners}`);
      if (SNAPSHOT_DIR !== undefined && (i === FIRST || i === CALLS)) await snapshot(cdp, snapshotFile(i));
    }
  }
  const elapsed = Date.now() - started - (SIP_TIMER_L_MS + 2_000) * (samples.length - 1);
  if (errors.length > 0) throw new Error(`the page threw: ${errors.join("; ")}`);

  const at = (call: number) => samples.find((s) => s.call === call) ?? (() => { throw new Error(`no sample after call ${call}`); })();
  const first = at(FIRST);
  const last = at(CALLS);
  const mib = (v: number) => `${(v / 2 ** 20).toFixed(2)} MiB`;
  const growth = (from: number, to: number) => `${(((to - from) / from) * 100).toFixed(1)}%`;
  report(
    `console memory: ${CALLS} calls in a row (accept, ${TALK_MS} ms of tone, hang up) in ${(elapsed / 1000).toFixed(0)} s, Chromium on the local server, load ${loadavg()[0].toFixed(1)}`,
    [
      ["JS heap after sign-in", mib(at(0).heap)],
      [`JS heap after call ${FIRST} / ${CALLS}`, `${mib(first.heap)} / ${mib(last.heap)}`],
      [`JS heap growth, call ${FIRST} → ${CALLS}`, growth(first.heap, last.heap)],
      [`DOM nodes held after call ${FIRST} / ${CALLS}`, `${first.nodes} / ${last.nodes}`],
      [`DOM nodes held growth, call ${FIRST} → ${CALLS}`, growth(first.nodes, last.nodes)],
      [`elements in the document after call ${FIRST} / ${CALLS}`, `${first.documentNodes} / ${last.documentNodes}`],
      [`event listeners after call ${FIRST} / ${CALLS}`, `${first.listeners} / ${last.listeners}`],
    ],
  );
  if (SNAPSHOT_DIR !== undefined) {
    const rows = await growthByConstructor(snapshotFile(FIRST), snapshotFile(CALLS));
    report(`heap snapshot, call ${FIRST} → ${CALLS}: growth, then the most grown by constructor (count, bytes)`, rows.slice(0, 27));
  }
} finally {
  await browser.close();
  await bench.close();
}
