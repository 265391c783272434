// What a serial-tier test file pays before its first assertion, and what a Chromium shared by the
// files of a run saves of it (issue 16). Rounds alternate, in this one process:
//   A: a Chromium launched for the file (launchBrowser(), as every browser file did), a page, the
//      console's sign-in screen loaded from a serve-mode server, the browser closed;
//   B: the same page from a context of a Chromium launched once (launchServer) and reached over its
//      WebSocket (connectBrowser(), as the files do now), the context closed.
// Beside them, each round starts and stops a serve-mode server (spawn to the URL line, then the
// demo admin's sign-in): the cost a file with its own server pays, for scale.
// Wall time and the CPU of this process's whole tree (itself, the children it reaped and the live
// descendants: Chromium's processes, the server) per round; on a shared machine, read the CPU.
import { readdirSync, readFileSync } from "node:fs";
import { chromium } from "playwright-core";
import { CHROMIUM_ARGS, CHROMIUM_PATH, launchBrowser } from "../test/helpers/browser.js";
import { demoGrant, serve } from "../test/helpers/serve.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

function statFields(pid: number | "self"): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/** Parent pid of every live process, to find this process's descendants. */
function descendants(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (fields === undefined) continue;
    const ppid = Number(fields[1]);
    const list = parents.get(ppid) ?? [];
    list.push(Number(name));
    parents.set(ppid, list);
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const child of parents.get(pid) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(root);
  return out;
}

/** CPU ms of this process, its reaped children, and its live descendants (their own and reaped). */
function treeCpuMs(): number {
  const ticks = (fields: string[] | undefined, withChildren: boolean) =>
    fields === undefined ? 0 : Number(fields[11]) + Number(fields[12]) + (withChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  let total = ticks(statFields("self"), true);
  for (const pid of descendants(process.pid)) total += ticks(statFields(pid), true);
  return total * 10;
}

function loadavg(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}

async function measure<T>(work: () => Promise<T>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu0 = treeCpuMs();
  const t0 = performance.now();
  await work();
  return { wallMs: performance.now() - t0, cpuMs: treeCpuMs() - cpu0 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
};

async function main(): Promise<void> {
  console.log(`suite-overhead: ${ROUNDS} rounds of each, alternating; load before ${loadavg()}`);
  const server = await serve();
  const shared = await chromium.launchServer({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  const results = { launch: [] as { wallMs: number; cpuMs: number }[], connect: [] as { wallMs: number; cpuMs: number }[], serve: [] as { wallMs: number; cpuMs: number }[] };
  const loadPage = async (page: import("playwright-core").Page) => {
    await page.goto(server.url);
    await page.waitForSelector("input[type=password]");
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? (["launch", "connect"] as const) : (["connect", "launch"] as const);
      for (const kind of order) {
        if (kind === "launch") {
          results.launch.push(
            await measure(async () => {
              const launched = await launchBrowser();
              await loadPage(await launched.browser.newPage());
              await launched.close();
            }),
          );
        } else {
          results.connect.push(
            await measure(async () => {
              const browser = await chromium.connect(shared.wsEndpoint());
              const context = await browser.newContext();
              await loadPage(await context.newPage());
              await context.close();
              await browser.close();
            }),
          );
        }
      }
      results.serve.push(
        await measure(async () => {
          const other = await serve();
          await demoGrant(other.url);
          await other.stop();
        }),
      );
      console.log(
        `round ${round + 1}: launch ${results.launch.at(-1)?.wallMs.toFixed(0)} ms wall / ${results.launch.at(-1)?.cpuMs} ms CPU; ` +
          `connect ${results.connect.at(-1)?.wallMs.toFixed(0)} / ${results.connect.at(-1)?.cpuMs}; ` +
          `serve+sign-in ${results.serve.at(-1)?.wallMs.toFixed(0)} / ${results.serve.at(-1)?.cpuMs}; load ${loadavg()}`,
      );
    }
  } finally {
    await shared.close();
    await server.stop();
  }
  const m = (xs: { wallMs: number; cpuMs: number }[]) => ({ wall: median(xs.map((x) => x.wallMs)), cpu: median(xs.map((x) => x.cpuMs)) });
  const a = m(results.launch);
  const b = m(results.connect);
  const s = m(results.serve);
  console.log(`median launch: ${a.wall.toFixed(0)} ms wall, ${a.cpu} ms CPU`);
  console.log(`median connect: ${b.wall.toFixed(0)} ms wall, ${b.cpu} ms CPU`);
  console.log(`connect / launch: wall ${(b.wall / a.wall).toFixed(2)}, CPU ${(b.cpu / a.cpu).toFixed(2)}`);
  console.log(`median serve + sign-in + stop: ${s.wall.toFixed(0)} ms wall, ${s.cpu} ms CPU`);
  console.log(`load after ${loadavg()}`);
}

await main();
