// `npm test`: build, lint, type-check, then every vitest tier (unit, api, sip, e2e, electron) in
// one vitest run whose projects run group after group (vitest.config.ts): the parallel group, then
// the real-time and serial ones. The one JSON report covers every group.
// Ends with one line `N passed, N failed, N skipped`; the three checks count as one test each.
import { spawnSync } from "node:child_process";
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

const built = step("build", "npx", ["electron-vite", "build"]);
step("lint", "npx", ["eslint", "."]);
step("typecheck (node)", "npx", ["tsc", "-p", "tsconfig.node.json", "--noEmit"]);
step("typecheck (renderer)", "npx", ["tsc", "-p", "tsconfig.web.json", "--noEmit"]);

if (built) {
  mkdirSync("test-results", { recursive: true });
  const report = "test-results/vitest.json";
  rmSync(report, { force: true });
  console.log("\n=== tests: vitest run");
  spawnSync("npx", ["vitest", "run", "--reporter=default", "--reporter=json", `--outputFile.json=${report}`, ...passthrough], {
    stdio: "inherit",
  });
  if (existsSync(report)) {
    const r = JSON.parse(readFileSync(report, "utf8"));
    passed += r.numPassedTests;
    // A file that failed to load has no failed test inside it; count it once.
    const brokenFiles = r.testResults.filter(
      (f) => f.status === "failed" && !f.assertionResults.some((a) => a.status === "failed"),
    );
    for (const f of brokenFiles) console.log(`=== ${f.name} failed to run: ${f.message}`);
    failed += r.numFailedTests + brokenFiles.length;
    skipped += r.numPendingTests + r.numTodoTests;
  } else {
    console.log("=== vitest wrote no report");
    failed++;
  }
}

console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed === 0 ? 0 : 1);
