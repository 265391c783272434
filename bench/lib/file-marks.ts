// A vitest reporter for bench/suite-cpu.ts: appends a line `{"t": ms, "event": "start"|"end", "file"}`
// to the file named by SUITE_CPU_MARKS when a test file starts and ends, so the sampler can give
// each file the CPU its processes used between those times (files run one at a time there).
import { appendFileSync } from "node:fs";
import { relative } from "node:path";
import type { Reporter, TestModule } from "vitest/node";

function mark(event: "start" | "end", module: TestModule): void {
  const path = process.env.SUITE_CPU_MARKS;
  if (path === undefined || path === "") return;
  const file = relative(process.cwd(), module.moduleId);
  const state = event === "end" ? module.state() : undefined;
  appendFileSync(path, `${JSON.stringify({ t: Date.now(), event, file, state })}\n`);
}

export default class FileMarks implements Reporter {
  onTestModuleQueued(module: TestModule): void {
    mark("start", module);
  }

  onTestModuleEnd(module: TestModule): void {
    mark("end", module);
  }
}
