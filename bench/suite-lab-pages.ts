// What a test file pays for its lab page (issue 16, session 21): labPageDir("phone-lab") in a
// fresh process, as each isolated file of the serial tiers calls it, A without the run's directory
// of bundled pages (Vite bundles the page: what every file did before) and B with it, the page
// already bundled there by an earlier file (test/helpers/lab-pages.ts). A and B alternate, each in
// a child process of its own; the figure is the call's own wall time and the child's CPU meanwhile
// (Vite's import is not counted: a vitest worker has it loaded already).
// `npx tsx bench/suite-lab-pages.ts [rounds]` (default 5).
import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { LAB_PAGES_ENV } from "../test/helpers/lab-pages.js";

const rounds = Number(process.argv[2] ?? 5);
const CHILD = `
const { labPageDir } = await import(${JSON.stringify(new URL("../test/helpers/phone-page.ts", import.meta.url).href)});
const cpu = process.cpuUsage();
const started = performance.now();
await labPageDir("phone-lab");
const used = process.cpuUsage(cpu);
console.log(JSON.stringify({ wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 }));
process.exit(0);
`;

interface Figure {
  wallMs: number;
  cpuMs: number;
}

function child(env: NodeJS.ProcessEnv): Figure {
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CHILD], { env, encoding: "utf8" });
  const line = r.stdout.trim().split("\n").pop() ?? "";
  if (r.status !== 0 || !line.startsWith("{")) throw new Error(`child failed (${r.status}): ${r.stderr}`);
  return JSON.parse(line) as Figure;
}

const shared = await mkdtemp(join(tmpdir(), "sb-lab-pages-bench-"));
const withoutShared: NodeJS.ProcessEnv = { ...process.env };
delete withoutShared[LAB_PAGES_ENV];
const withShared: NodeJS.ProcessEnv = { ...process.env, [LAB_PAGES_ENV]: shared };
try {
  // The run's first file bundles the page into the directory (not counted).
  child(withShared);
  const a: Figure[] = [];
  const b: Figure[] = [];
  console.log("| round | load (1 min) | A: bundled by the file, wall / CPU ms | B: the run's bundle, wall / CPU ms |");
  console.log("|---|---|---|---|");
  for (let i = 1; i <= rounds; i++) {
    const load = loadavg()[0]?.toFixed(1);
    const fa = child(withoutShared);
    const fb = child(withShared);
    a.push(fa);
    b.push(fb);
    console.log(`| ${i} | ${load} | ${fa.wallMs.toFixed(0)} / ${fa.cpuMs.toFixed(0)} | ${fb.wallMs.toFixed(1)} / ${fb.cpuMs.toFixed(1)} |`);
  }
  const mean = (xs: Figure[], k: keyof Figure) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
  console.log(`| mean | ${loadavg()[0]?.toFixed(1)} | ${mean(a, "wallMs").toFixed(0)} / ${mean(a, "cpuMs").toFixed(0)} | ${mean(b, "wallMs").toFixed(1)} / ${mean(b, "cpuMs").toFixed(1)} |`);
} finally {
  await rm(shared, { recursive: true, force: true });
}
