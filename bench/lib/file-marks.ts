// A vitest reporter for bench/suite-cpu.ts: appends a line `{"t": ms, "event": "start"|"end", "file"}`
// to the file named by SUITE_CPU_MARKS when a test file starts and ends, so the sampler can give
// each file the CPU its processes used between those times (files run one at a time there), and
// a line `{"t": its end, "event": "test", "file", "name", "start", "state"}` when a test ends,
// from the test's own start time and duration (vitest's diagnostic), so a file's CPU can be split
// by its tests (what is left is its hooks and set-up).
import { appendFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestCase, TestModule } from "vitest/node";

function mark(event: "start" | "end", module: TestModule): void {
  const path = process.env.SUITE_CPU_MARKS;
  if (path === undefined || path === "") return;
  const file = relative(process.cwd(), module.moduleId);
  const state = event === "end" ? module.state() : undefined;
  appendFileSync(path, `${JSON.stringify({ t: Date.now(), event, file, state })}\n`);
}

function markTest(test: TestCase): void {
  const path = process.env.SUITE_CPU_MARKS;
  if (path === undefined || path === "") return;
  const diagnostic = test.diagnostic();
  if (diagnostic === undefined) return;
  const file = relative(process.cwd(), test.module.moduleId);
  const line = { t: diagnostic.startTime + diagnostic.duration, event: "test", file, name: test.fullName, start: diagnostic.startTime, state: test.result().state };
  appendFileSync(path, `${JSON.stringify(line)}\n`);
}

export default class FileMarks implements Reporter {
  onTestCaseResult(test: TestCase): void {
    markTest(test);
  }

  onTestModuleQueued(module: TestModule): void {
    mark("start", module);
  }

  onTestModuleEnd(module: TestModule): void {
    mark("end", module);
  }
}
