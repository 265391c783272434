// What the benchmarks ask of the server process they start: the line it prints when ready, and
// the CPU it has used (to give each flood's server CPU beside the client's latency).
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";

/** Resolves with the first match of `pattern` in what the child prints; rejects if it exits first. */
export function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const onData = (c: Buffer): void => {
      out += c.toString();
      const m = pattern.exec(out);
      if (m) resolve(m[0]);
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code}: ${out}`)));
  });
}

/** CPU milliseconds the process has used so far (utime + stime from /proc, at the kernel's 100 Hz). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Stops a server the bench started and waits for it to exit. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill("SIGTERM");
  await new Promise((resolve) => child.once("exit", resolve));
}

/** The body of the i-th device the API benchmarks create (half softphones, half SIP devices). */
export function benchDevice(i: number): Record<string, unknown> {
  return {
    name: `bench device ${i}`,
    device_type: i % 2 === 0 ? "softphone" : "sip_device",
    sip: { username: `bench${i}`, password: "0123456789abcdef01234567" },
  };
}
