// `npm test`: build, then lint and both type-checks at once, beside the tests at nice 19 (or before
// them: `SWITCHBOARD_CHECKS=first`), and every vitest tier (vitest.config.ts) in one vitest run
// whose projects run group after group: unit, then media-parallel and parallel, then the real-time
// file, then the serial tier, then serial-browser, then serial-late. Its JSON report is
// test-results/vitest.json.
// By default (`SWITCHBOARD_SERIAL_STREAMS=one` for that single run) the last three run as streams
// at once instead: one vitest run of the tiers up to the real-time file, then three vitest runs
// side by side (since session 22; two before it, `SWITCHBOARD_SERIAL_STREAMS=two`): the serial
// tier (media, call and browser files with the server in the test process), serial-browser
// (browser files against a serve-mode server) and serial-late (serial files given their own
// stream so that the three end together), each one file at a time, each with its own report
// (test-results/vitest-<label>.json) and its output's lines prefixed with its label. vitest alone
// cannot do that: two projects of one group order share one pool of workers, which could run two
// serial files together.
// Ends with one line `N passed, N failed, N skipped`; the three checks count as one test each.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, rmSync } from "node:fs";
import { cpus, setPriority } from "node:os";

const passthrough = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;

/** The machine's CPU counters (Linux's /proc/stat: busy and total jiffies), or undefined elsewhere. */
function cpuCounters() {
  if (!existsSync("/proc/stat")) return undefined;
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = fields[3] + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/** Runs `work` and prints its wall time and how busy the machine's cores were meanwhile. */
async function timed(label, work) {
  const started = Date.now();
  const before = cpuCounters();
  const result = await work();
  const after = cpuCounters();
  const wall = ((Date.now() - started) / 1000).toFixed(0);
  const busy = before && after && after.total > before.total ? (after.busy - before.busy) / (after.total - before.total) : undefined;
  const share = busy === undefined ? "" : `, the machine's ${cpus().length} cores ${(busy * 100).toFixed(0)}% busy`;
  console.log(`=== ${label}: ${wall} s${share}`);
  return result;
}

/** Counts a step's verdict (one test) and says when it failed. */
function tally(name, status, signal) {
  if (status === 0) passed++;
  else {
    failed++;
    console.log(`=== ${name} FAILED (exit ${status ?? signal})`);
  }
  return status === 0;
}

function step(name, command, args) {
  console.log(`\n=== ${name}: ${command} ${args.join(" ")}`);
  const r = spawnSync(command, args, { stdio: "inherit" });
  return tally(name, r.status, r.signal);
}

/** One step run beside others: its output (stdout and stderr together) kept for later; `low`: at nice 19. */
function stepQuiet(name, command, args, low = false) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    // npx starts the tool as its child, which inherits the priority set here before it forks.
    if (low && child.pid !== undefined) {
      try {
        setPriority(child.pid, 19);
      } catch {
        // Not allowed here: the checks run at the tests' priority.
      }
    }
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk) => (output += chunk));
    child.on("close", (status, signal) => resolve({ name, command, args, output, status, signal }));
  });
}

/** The vitest arguments of one run: its projects (none: all), both reporters, and what `npm test --` passed. */
function vitestArgs(projects, report) {
  return [
    "vitest",
    "run",
    ...projects.flatMap((p) => ["--project", p]),
    // A file filter given to `npm test --` may match no file of one of the split runs' projects.
    ...(projects.length > 0 ? ["--passWithNoTests"] : []),
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${report}`,
    ...passthrough,
  ];
}

/** One vitest run in this terminal, its output as it comes. */
function runInline(label, projects) {
  const report = label === "all" ? "test-results/vitest.json" : `test-results/vitest-${label}.json`;
  rmSync(report, { force: true });
  console.log(`\n=== tests (${label}): npx ${vitestArgs(projects, report).join(" ")}`);
  spawnSync("npx", vitestArgs(projects, report), { stdio: "inherit" });
  return Promise.resolve(report);
}

/**
 * One vitest run beside another: each line of its output prefixed with its label. `env`: more
 * environment for its process.
 */
function runPrefixed(label, projects, env = {}) {
  const report = `test-results/vitest-${label}.json`;
  rmSync(report, { force: true });
  console.log(`\n=== tests (${label}): npx ${vitestArgs(projects, report).join(" ")}`);
  // No colour codes or a redrawn summary in interleaved output (vitest's TTY mode).
  const child = spawn("npx", vitestArgs(projects, report), { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "1", NO_COLOR: "1", ...env } });
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ]) {
    let rest = "";
    from.setEncoding("utf8");
    from.on("data", (chunk) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) to.write(`[${label}] ${line}\n`);
    });
    from.on("end", () => {
      if (rest !== "") to.write(`[${label}] ${rest}\n`);
    });
  }
  return new Promise((resolve) => child.on("close", () => resolve(report)));
}

function count(label, report) {
  if (!existsSync(report)) {
    console.log(`=== vitest (${label}) wrote no report`);
    failed++;
    return;
  }
  const r = JSON.parse(readFileSync(report, "utf8"));
  passed += r.numPassedTests;
  // A file that failed to load has no failed test inside it; count it once.
  const brokenFiles = r.testResults.filter((f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"));
  for (const f of brokenFiles) console.log(`=== ${f.name} failed to run: ${f.message}`);
  failed += r.numFailedTests + brokenFiles.length;
  skipped += r.numPendingTests + r.numTodoTests;
}

const built = await timed("build", () => step("build", "npx", ["electron-vite", "build"]));
// The three checks at once (each is one thread). By default (since session 24) they run beside the
// tests at the lowest priority (nice 19), filling the cores' idle moments of the test phases
// (tests up to the real-time file leave about a third of the two cores idle, the serial streams
// 6-9%), instead of 53 s on their own before the tests; `SWITCHBOARD_CHECKS=first` runs them first,
// as before, to compare. Their output is printed whole, one after the other, when the tests end.
const checksFirst = process.env.SWITCHBOARD_CHECKS === "first";
const checksStarted = Date.now();
const checks = Promise.all([
  stepQuiet("lint", "npx", ["eslint", "."], !checksFirst),
  stepQuiet("typecheck (node)", "npx", ["tsc", "-p", "tsconfig.node.json", "--noEmit"], !checksFirst),
  stepQuiet("typecheck (renderer)", "npx", ["tsc", "-p", "tsconfig.web.json", "--noEmit"], !checksFirst),
]).then((results) => {
  console.log(`\n=== lint and type checks ended ${((Date.now() - checksStarted) / 1000).toFixed(0)} s after they started${checksFirst ? "" : " (beside the tests, nice 19)"}`);
  return results;
});
/** Prints the checks' output and counts them. */
function reportChecks(results) {
  for (const r of results) {
    console.log(`\n=== ${r.name}: ${r.command} ${r.args.join(" ")}`);
    process.stdout.write(r.output);
    tally(r.name, r.status, r.signal);
  }
}
if (checksFirst) reportChecks(await timed("lint and type checks", () => checks));

if (built) {
  mkdirSync("test-results", { recursive: true });
  if (process.env.SWITCHBOARD_SERIAL_STREAMS !== "one") {
    count("parallel", await timed("tests up to the real-time file", () => runInline("parallel", ["unit", "media-parallel", "parallel", "realtime"])));
    // Three streams (session 22), or `SWITCHBOARD_SERIAL_STREAMS=two` for session 21's two
    // (serial-late after serial-browser in one stream), to compare.
    const streams =
      process.env.SWITCHBOARD_SERIAL_STREAMS === "two"
        ? [
            ["serial", ["serial", "serial-media"]],
            ["serial-browser", ["serial-browser", "serial-late"]],
          ]
        : [
            ["serial", ["serial", "serial-media"]],
            ["serial-browser", ["serial-browser"]],
            ["serial-late", ["serial-late"]],
          ];
    // serial-browser alone in its process: its files drive a Chromium of that process's own
    // (vitest.config.ts, SWITCHBOARD_CHROMIUM_IN_PROCESS), so the shared Chromium its globalSetup
    // would launch is never used there (helper slim, session 25: ~2.5 s of CPU a run to launch,
    // settle and idle). Not when that switch is set to 0 from outside: the files then connect to it.
    const alone = (projects) =>
      projects.length === 1 && projects[0] === "serial-browser" && process.env.SWITCHBOARD_CHROMIUM_IN_PROCESS !== "0" ? { SWITCHBOARD_SHARED_CHROMIUM: "off" } : {};
    const reports = await timed(`the ${streams.length} serial streams`, () =>
      Promise.all(streams.map(([label, projects]) => timed(`stream ${projects.join(" + ")}`, () => runPrefixed(label, projects, alone(projects))))),
    );
    streams.forEach(([label], i) => count(label, reports[i]));
  } else {
    count("all", await timed("tests", () => runInline("all", [])));
  }
}

if (!checksFirst) reportChecks(await timed("waiting for the lint and type checks", () => checks));

console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
