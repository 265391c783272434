// Kazoo's documents' examples reproduced by test/conformance/: runs that suite (vitest, JSON
// reporter) against the started servers it starts itself, and counts per document the examples
// reproduced, those passing as documented, and those deliberately different (tests named
// "... [differs: reason]"), with each reason. Not a timing: a count, the figure issue 15 asks.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { report } from "./report.js";

interface Assertion {
  title: string;
  status: "passed" | "failed" | "skipped" | "pending" | "todo";
}
interface FileResult {
  name: string;
  assertionResults: Assertion[];
}

const dir = mkdtempSync(join(tmpdir(), "conformance-"));
const out = join(dir, "results.json");
const run = spawnSync("npx", ["vitest", "run", "test/conformance", "--reporter=json", `--outputFile=${out}`], { stdio: ["ignore", "ignore", "inherit"] });
const files = (JSON.parse(readFileSync(out, "utf8")) as { testResults: FileResult[] }).testResults;
rmSync(dir, { recursive: true, force: true });

const DIFFERS = /\[differs: ([^\]]+)\]/;
const rows: [string, string][] = [];
const reasons: string[] = [];
let total = 0;
let asDocumented = 0;
let differs = 0;
let failed = 0;
for (const file of [...files].sort((a, b) => a.name.localeCompare(b.name))) {
  const tests = file.assertionResults;
  const passed = tests.filter((t) => t.status === "passed");
  const different = passed.filter((t) => DIFFERS.test(t.title));
  const failing = tests.filter((t) => t.status === "failed");
  total += tests.length;
  asDocumented += passed.length - different.length;
  differs += different.length;
  failed += failing.length;
  rows.push([basename(file.name, ".test.ts"), `${tests.length} examples, ${passed.length - different.length} as documented, ${different.length} differ, ${failing.length} failing`]);
  for (const t of different) reasons.push(`${t.title.replace(DIFFERS, "").trim()}: ${DIFFERS.exec(t.title)?.[1] ?? ""}`);
  for (const t of failing) reasons.push(`FAILING ${t.title}`);
}
rows.push(["all documents", `${total} examples, ${asDocumented} as documented, ${differs} differ, ${failed} failing`]);
report("conformance (Kazoo documents' examples sent as written)", rows);
if (reasons.length > 0) process.stdout.write(`\n  deliberately different or failing:\n${reasons.map((r) => `    - ${r}`).join("\n")}\n`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
