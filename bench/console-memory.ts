// The console's memory over a shift (issue 7): the built console (out/renderer: run `npm run build`
// first) in Chromium, signed in as agent1 on an in-process server, takes calls in a row from a
// simulated caller: Accept (Alt+A), about a second of the caller's tone, hang up (Alt+E), back to
// the idle view. First BENCH_WARMUP (default 20) calls, after which every view holds what it holds
// all shift (the recent-calls list its 20 rows), then BENCH_CALLS (default 100) more. After the
// warm-up and after the last call the bench waits for sip.js to let go of the calls' transactions
// (Timer L, 32 s after the answer, keeps each call's objects until then), forces garbage
// collection and reads the page's JS heap (CDP Performance.getMetrics JSHeapUsedSize) and DOM nodes
// (in the document, and all V8 still holds, detached ones included); the growth between the two
// is the figure (no more than 10%). It also samples after calls 10 and 100, the points session 3
// measured between, whose growth includes the recent-calls list filling from 10 rows to 20.
// The bench drives the page through its own CDP session only (keys through the Input domain, tiny
// Runtime.evaluate probes of the DOM), never Playwright's locators or page.evaluate(): those run
// Playwright's injected scripts in the page's V8 heap, which no console in use has (see inPage()).
// BENCH_EVERY=n adds a sample every n calls; BENCH_SNAPSHOT=<dir> writes heap snapshots after the
// warm-up and the last call and prints what grew between them (compiled code by script, then by
// constructor) for a leak hunt.
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { CDPSession, Page } from "playwright-core";
import { launchBrowser } from "../test/helpers/browser.js";
import { poll } from "../test/helpers/poll.js";
import { DEMO_PASSWORD } from "../test/helpers/api.js";
import { CONSOLE_DIR } from "../test/helpers/console-page.js";
import { benchLogin, startBenchServer } from "./lib/server.js";
import { report } from "./report.js";

const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const CALLS = Number(process.env.BENCH_CALLS ?? 100);
const LAST = WARMUP + CALLS;
const EVERY = Number(process.env.BENCH_EVERY ?? 0);
const SNAPSHOT_DIR = process.env.BENCH_SNAPSHOT;
/** Session 3's two points (its figure was the growth between them). */
const EARLIER = [10, 100] as const;
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

const until = <T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> => poll(what, check, ms, 20);

/**
 * An expression's value in the page's own world, through the bench's CDP session: a few bytes of
 * code, compiled once. Not Playwright's locators or page.evaluate(): they run Playwright's injected
 * and utility scripts in the page's isolate, whose objects and JIT-compiled code (about 135 KiB of
 * it optimised over 90 calls of polling) count in the page's JS heap though no console has them.
 */
async function inPage(cdp: CDPSession, expression: string): Promise<unknown> {
  const { result, exceptionDetails } = await cdp.send("Runtime.evaluate", { expression, returnByValue: true });
  if (exceptionDetails !== undefined) throw new Error(`${expression} threw: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
  return result.value;
}

/** Polls an expression in the page until it is true. */
function untilInPage(cdp: CDPSession, what: string, expression: string, ms = 20_000): Promise<true> {
  return until(what, async () => ((await inPage(cdp, expression)) === true ? true : undefined), ms);
}

/** test/helpers' signIn() without a locator: each field selected and typed into (as fill() does), then Sign in. */
async function signIn(cdp: CDPSession, page: Page, username: string): Promise<void> {
  const form = `document.querySelector("form.login-card")`;
  await untilInPage(cdp, "the sign-in form", `${form} !== null`);
  for (const [name, value] of [["account_name", "demo"], ["username", username], ["password", DEMO_PASSWORD]] as const) {
    await inPage(cdp, `(() => { const input = ${form}.elements.namedItem(${JSON.stringify(name)}); input.focus(); input.select(); })()`);
    await page.keyboard.insertText(value);
  }
  // The Sign in button, as the helper clicks it. (Enter in the password field would leave React's
  // select-event plugin holding the focused input, and so the whole detached form, until another
  // text field takes the focus: 87 nodes more in both samples.)
  await inPage(cdp, `${form}.querySelector('button[type="submit"]').focus()`);
  await page.keyboard.press("Enter");
}

const REGISTERED = `document.querySelector('[data-testid="registration-state"]')?.textContent === "Registration: Registered"`;
const OFFERED = `[...document.querySelectorAll(".call-offer button")].some((b) => b.textContent === "Accept")`;
const CONNECTED = `document.querySelector(".active-call .call-state")?.textContent === "Connected"`;
const IDLE = `document.querySelector(".idle-card")?.textContent.includes("No calls right now.") === true`;

async function sample(cdp: CDPSession, call: number): Promise<Sample> {
  // Twice: objects freed by the first collection's finalizers go in the second.
  await cdp.send("HeapProfiler.collectGarbage");
  await cdp.send("HeapProfiler.collectGarbage");
  const { metrics } = await cdp.send("Performance.getMetrics");
  const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? Number.NaN;
  const documentNodes = await inPage(cdp, "document.getElementsByTagName('*').length");
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
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[]; edge_types: [string[], ...unknown[]] } };
  nodes: number[];
  edges: number[];
  strings: string[];
}

interface SnapshotTotals {
  /** Count and self size per "type:constructor" (strings lumped together). */
  byKey: Map<string, { count: number; bytes: number }>;
  /** Self size of compiled code (bytecode, baseline and optimised code, their tables) per script. */
  codeByScript: Map<string, number>;
}

/**
 * Reads a heap snapshot file. Compiled code is put down to the script of the function it belongs
 * to: the nearest SharedFunctionInfo (or closure, through its `shared`) among its retainers.
 */
async function snapshotTotals(file: string): Promise<SnapshotTotals> {
  const heap = JSON.parse(await readFile(file, "utf8")) as HeapSnapshot;
  const meta = heap.snapshot.meta;
  const [nodeFields, edgeFields] = [meta.node_fields.length, meta.edge_fields.length];
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ["type", "name", "self_size", "edge_count"].map((f) => meta.node_fields.indexOf(f));
  const [edgeTypeAt, edgeNameAt, edgeToAt] = ["type", "name_or_index", "to_node"].map((f) => meta.edge_fields.indexOf(f));
  const at = (array: number[], i: number) => array[i] ?? 0;
  const count = heap.nodes.length / nodeFields;
  const typeOf = (n: number) => meta.node_types[0][at(heap.nodes, n * nodeFields + (typeAt ?? 0))] ?? "?";
  const nameOf = (n: number) => heap.strings[at(heap.nodes, n * nodeFields + (nameAt ?? 0))] ?? "";
  const firstEdge = new Uint32Array(count + 1);
  for (let n = 0; n < count; n++) firstEdge[n + 1] = (firstEdge[n] ?? 0) + at(heap.nodes, n * nodeFields + (edgeCountAt ?? 0)) * edgeFields;
  const edgeTarget = (e: number) => at(heap.edges, e + (edgeToAt ?? 0)) / nodeFields;
  const edgeName = (e: number) => {
    const type = meta.edge_types[0][at(heap.edges, e + (edgeTypeAt ?? 0))];
    return type === "element" || type === "hidden" ? "" : (heap.strings[at(heap.edges, e + (edgeNameAt ?? 0))] ?? "");
  };
  const child = (n: number, name: string) => {
    for (let e = firstEdge[n] ?? 0; e < (firstEdge[n + 1] ?? 0); e += edgeFields) if (edgeName(e) === name) return edgeTarget(e);
    return -1;
  };
  // Retainers of every node, as one flat array indexed by node (CSR).
  const retainerStart = new Uint32Array(count + 1);
  for (let e = 0; e < heap.edges.length; e += edgeFields) retainerStart[edgeTarget(e) + 1]++;
  for (let n = 0; n < count; n++) retainerStart[n + 1] = (retainerStart[n + 1] ?? 0) + (retainerStart[n] ?? 0);
  const retainers = new Uint32Array(heap.edges.length / edgeFields);
  const filled = retainerStart.slice(0, count);
  for (let n = 0; n < count; n++) {
    for (let e = firstEdge[n] ?? 0; e < (firstEdge[n + 1] ?? 0); e += edgeFields) retainers[filled[edgeTarget(e)]++] = n;
  }
  const isFunctionInfo = (n: number) => typeOf(n) === "code" && nameOf(n).startsWith("system / SharedFunctionInfo");
  const functionInfoOf = (n: number): number => {
    let frontier = [n];
    const seen = new Set(frontier);
    for (let depth = 0; depth < 5 && frontier.length > 0; depth++) {
      const next: number[] = [];
      for (const m of frontier) {
        if (isFunctionInfo(m)) return m;
        if (typeOf(m) === "closure" && child(m, "shared") >= 0) return child(m, "shared");
        for (let r = retainerStart[m] ?? 0; r < (retainerStart[m + 1] ?? 0); r++) {
          const p = retainers[r] ?? 0;
          if (seen.has(p)) continue;
          seen.add(p);
          next.push(p);
        }
      }
      frontier = next;
    }
    return -1;
  };
  const scriptOf = (info: number) => {
    const script = info < 0 ? -1 : Math.max(child(info, "script"), child(info, "script_or_debug_info"));
    if (script < 0) return "(no script: V8's and Blink's built-ins)";
    const url = [child(script, "source_url"), child(script, "name")].map((s) => (s < 0 ? "" : nameOf(s))).find((s) => s !== "") ?? "";
    return url === "" ? "scripts without a URL (evaluated by CDP clients)" : url.replace(/^https?:\/\/[^/]+/, "");
  };

  const byKey = new Map<string, { count: number; bytes: number }>();
  const codeByScript = new Map<string, number>();
  for (let n = 0; n < count; n++) {
    const type = typeOf(n);
    const bytes = at(heap.nodes, n * nodeFields + (sizeAt ?? 0));
    const key = type.includes("string") ? "string" : `${type}:${nameOf(n).slice(0, 70)}`;
    const total = byKey.get(key) ?? { count: 0, bytes: 0 };
    total.count++;
    total.bytes += bytes;
    byKey.set(key, total);
    if (type === "code") {
      const script = scriptOf(isFunctionInfo(n) ? n : functionInfoOf(n));
      codeByScript.set(script, (codeByScript.get(script) ?? 0) + bytes);
    }
  }
  return { byKey, codeByScript };
}

/**
 * What grew between two snapshots: three totals (V8's compiled code, which grows as the optimising
 * tiers compile functions that run hot; the rest of V8's heap, which with the code is what
 * JSHeapUsedSize counts; Blink's own objects, which it does not), compiled code by script, then
 * the most grown by constructor, largest first.
 */
async function growthBetween(before: string, after: string): Promise<[string, string][]> {
  const [a, b] = [await snapshotTotals(before), await snapshotTotals(after)];
  const grown = [...b.byKey]
    .map(([key, { count, bytes }]) => ({ key, count: count - (a.byKey.get(key)?.count ?? 0), bytes: bytes - (a.byKey.get(key)?.bytes ?? 0) }))
    .sort((x, y) => y.bytes - x.bytes);
  const kib = (bytes: number) => `${bytes >= 0 ? "+" : ""}${(bytes / 1024).toFixed(1)} KiB`;
  const sum = (kind: (key: string) => boolean) => grown.filter((g) => kind(g.key)).reduce((total, g) => total + g.bytes, 0);
  const isCode = (key: string) => key.startsWith("code:");
  // The snapshot types some of V8's own objects "native" too ("system / WeakArrayList"): those count.
  const isNative = (key: string) => key.startsWith("native:") && !key.startsWith("native:system / ");
  const scripts = [...new Set([...a.codeByScript.keys(), ...b.codeByScript.keys()])]
    .map((script): [string, number] => [script, (b.codeByScript.get(script) ?? 0) - (a.codeByScript.get(script) ?? 0)])
    .filter(([, bytes]) => Math.abs(bytes) >= 1024)
    .sort((x, y) => y[1] - x[1]);
  return [
    ["all compiled code (code:*)", kib(sum(isCode))],
    ["the rest of V8's heap", kib(sum((key) => !isCode(key) && !isNative(key)))],
    ["Blink's objects (native:*, not in the JS heap figure)", kib(sum(isNative))],
    ...scripts.map(([script, bytes]): [string, string] => [`compiled code of ${script}`, kib(bytes)]),
    ...grown.slice(0, 24).map(({ key, count, bytes }): [string, string] => [key, `${count >= 0 ? "+" : ""}${count}, ${kib(bytes)}`]),
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
  const cdp = await page.context().newCDPSession(page);
  await signIn(cdp, page, "agent1");
  await untilInPage(cdp, "the phone to register", REGISTERED);
  await cdp.send("Performance.enable");
  await untilInPage(cdp, "the idle view", IDLE);

  const samples: Sample[] = [await sample(cdp, 0)];
  const started = Date.now();
  for (let i = 1; i <= LAST; i++) {
    const res = await fetch(`${server.url}/v2/accounts/${admin.accountId}/sim/calls`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Auth-Token": admin.token },
      body: JSON.stringify({
        data: { to: AGENT_EXTENSION, caller_id_name: `Caller ${i}`, caller_id_number: `+1415555${String(i).padStart(4, "0")}`, audio: "tone_stream://%(1000,0,1200)" },
      }),
    });
    if (res.status !== 201) throw new Error(`sim call ${i} refused: ${res.status} ${await res.text()}`);
    // Keys go in through CDP's Input domain (page.keyboard), no script in the page.
    await untilInPage(cdp, `the offer of call ${i}`, OFFERED);
    await page.keyboard.press("Alt+KeyA");
    await untilInPage(cdp, `call ${i} connected`, CONNECTED);
    await sleep(TALK_MS);
    await page.keyboard.press("Alt+KeyE");
    await untilInPage(cdp, `the idle view after call ${i}`, IDLE);
    await until("the call to end on the server", () => (server.calls.channels.size === 0 ? true : undefined));
    if (i === WARMUP || i === LAST || EARLIER.some((n) => n === i) || (EVERY > 0 && i % EVERY === 0)) {
      // What stays, not what is still in flight: sip.js's transactions end, and the recent-calls
      // refresh (400 ms after the call's record) lands.
      await sleep(SIP_TIMER_L_MS + 2_000);
      const s = await sample(cdp, i);
      samples.push(s);
      console.log(`call ${i}: heap ${(s.heap / 2 ** 20).toFixed(2)} MiB, nodes ${s.nodes} (document ${s.documentNodes}), listeners ${s.listeners}`);
      if (SNAPSHOT_DIR !== undefined && (i === WARMUP || i === LAST)) await snapshot(cdp, snapshotFile(i));
    }
  }
  const elapsed = Date.now() - started - (SIP_TIMER_L_MS + 2_000) * (samples.length - 1);
  if (errors.length > 0) throw new Error(`the page threw: ${errors.join("; ")}`);

  const at = (call: number) => samples.find((s) => s.call === call) ?? (() => { throw new Error(`no sample after call ${call}`); })();
  const first = at(WARMUP);
  const last = at(LAST);
  const mib = (v: number) => `${(v / 2 ** 20).toFixed(2)} MiB`;
  const growth = (from: number, to: number) => `${(((to - from) / from) * 100).toFixed(1)}%`;
  const [from, to] = EARLIER.map((call) => samples.find((s) => s.call === call));
  report(
    `console memory: ${WARMUP} calls to warm up, then ${CALLS} in a row (accept, ${TALK_MS} ms of tone, hang up), ${LAST} in ${(elapsed / 1000).toFixed(0)} s, Chromium on the local server, load ${loadavg()[0].toFixed(1)}`,
    [
      ["JS heap after sign-in", mib(at(0).heap)],
      [`JS heap after call ${WARMUP} / ${LAST}`, `${mib(first.heap)} / ${mib(last.heap)}`],
      [`JS heap growth, call ${WARMUP} → ${LAST}`, growth(first.heap, last.heap)],
      ...(from !== undefined && to !== undefined
        ? [[`JS heap after call ${from.call} / ${to.call} (session 3's points)`, `${mib(from.heap)} / ${mib(to.heap)}, ${growth(from.heap, to.heap)}`] as [string, string]]
        : []),
      [`DOM nodes held after call ${WARMUP} / ${LAST}`, `${first.nodes} / ${last.nodes}`],
      [`elements in the document after call ${WARMUP} / ${LAST}`, `${first.documentNodes} / ${last.documentNodes}`],
      [`event listeners after call ${WARMUP} / ${LAST}`, `${first.listeners} / ${last.listeners}`],
    ],
  );
  if (SNAPSHOT_DIR !== undefined) {
    const rows = await growthBetween(snapshotFile(WARMUP), snapshotFile(LAST));
    report(`heap snapshot, call ${WARMUP} → ${LAST}: growth, compiled code by script, then the most grown by constructor (count, bytes)`, rows);
  }
} finally {
  await browser.close();
  await bench.close();
}
