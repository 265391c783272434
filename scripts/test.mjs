// `npm test`: build, lint, type-check, then every vitest tier (vitest.config.ts). First one vitest
// run of the tiers that go group after group (unit, then parallel and parallel-media, then the
// real-time file); then two vitest runs at once, one a stream each: the serial tier (media, call
// and browser files with the server in the test process, one at a time) and serial-browser
// (browser files against a serve-mode server, one at a time). vitest can run two projects side by
// side only as one pool of workers shared by their files, which could put two serial files
// together; two processes keep each tier one file at a time. Each run writes its JSON report.
// Ends with one line `N passed, N failed, N skipped`; the three checks count as one test each.
// `SWITCHBOARD_SERIAL_STREAMS=one` runs the two serial tiers one after the other instead.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, existsSync, rmSync } from "node:fs";

const passthrough = process.argv.slice(2);
let passed = 0;
let failed = 0;
let skipped = 0;

function step(name, command, args) {
  console.log(`\n=== ${name}: ${command} ${args.join(" ")}`);
  const r = spawnSync(command, args, { stdio: "inherit" });
  if (r.status === 0) passed++;
  else {
    failed++;
    console.log(`=== ${name} FAILED (exit ${r.status ?? r.signal})`);
  }
  return r.status === 0;
}

/** The vitest arguments of one run: its projects, both reporters, and what `npm test --` passed. */
function vitestArgs(projects, report) {
  return [
    "vitest",
    "run",
    ...projects.flatMap((p) => ["--project", p]),
    // A file filter given to `npm test --` may match no file of one run's projects.
    "--passWithNoTests",
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${report}`,
    ...passthrough,
  ];
}

/** One vitest run in this terminal, its output as it comes. */
function runInline(label, projects) {
  const report = `test-results/vitest-${label}.json`;
  rmSync(report, { force: true });
  console.log(`\n=== tests (${label}): npx ${vitestArgs(projects, report).join(" ")}`);
  spawnSync("npx", vitestArgs(projects, report), { stdio: "inherit" });
  return Promise.resolve(report);
}

/** One vitest run beside another: each line of its output prefixed with its label. */
function runPrefixed(label, projects) {
  const report = `test-results/vitest-${label}.json`;
  rmSync(report, { force: true });
  console.log(`\n=== tests (${label}): npx ${vitestArgs(projects, report).join(" ")}`);
  // No colour codes or a redrawn summary in interleaved output (vitest's TTY mode).
  const child = spawn("npx", vitestArgs(projects, report), { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CI: "1", NO_COLOR: "1" } });
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

const built = step("build", "npx", ["electron-vite", "build"]);
step("lint", "npx", ["eslint", "."]);
step("typecheck (node)", "npx", ["tsc", "-p", "tsconfig.node.json", "--noEmit"]);
step("typecheck (renderer)", "npx", ["tsc", "-p", "tsconfig.web.json", "--noEmit"]);

if (built) {
  mkdirSync("test-results", { recursive: true });
  const first = await runInline("parallel", ["unit", "parallel", "parallel-media", "realtime"]);
  count("parallel", first);
  if (process.env.SWITCHBOARD_SERIAL_STREAMS === "one") {
    count("serial", await runInline("serial", ["serial"]));
    count("serial-browser", await runInline("serial-browser", ["serial-browser"]));
  } else {
    const [serial, browser] = await Promise.all([runPrefixed("serial", ["serial"]), runPrefixed("serial-browser", ["serial-browser"])]);
    count("serial", serial);
    count("serial-browser", browser);
  }
}

console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
