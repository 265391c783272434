// The data directory's lock file names its owner so that another process can tell a live owner
// from a stale lock: a pid alone is not enough, since after a crash and a reboot (or just time)
// the same pid may belong to an unrelated program. So the lock also holds the host, the boot and
// the process's start time (Linux's /proc), which together name one process once.
import { readFile } from "node:fs/promises";
import { hostname } from "node:os";

export interface LockOwner {
  pid: number;
  host: string;
  /** /proc/sys/kernel/random/boot_id; null where there is no /proc. */
  boot: string | null;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat); null without /proc. */
  started: number | null;
  /** When the lock was taken, ISO 8601, for the refusal message. */
  since: string;
}

export type LockVerdict = { kind: "mine" } | { kind: "held"; reason: string } | { kind: "stale"; reason: string };

export class DataDirInUseError extends Error {
  override name = "DataDirInUseError";

  constructor(dir: string, lockFile: string, reason: string) {
    super(
      `store: the data directory ${dir} is in use by another Switchboard server (${reason}); stop that server or pick another ` +
        `--data-dir. If it is certainly not running, delete ${lockFile}.`,
    );
  }
}

export async function newLock(nowMs: number): Promise<LockOwner> {
  return { pid: process.pid, host: hostname(), boot: await bootId(), started: await startTime(process.pid), since: new Date(nowMs).toISOString() };
}

/** The lock's owner, or undefined for anything else (empty, cut short, an older version's bare pid). */
export function parseLock(text: string): LockOwner | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const pid = v.pid;
  if (typeof pid !== "number" || !Number.isInteger(pid) || pid <= 0) return undefined;
  if (typeof v.host !== "string" || typeof v.since !== "string") return undefined;
  return {
    pid,
    host: v.host,
    boot: typeof v.boot === "string" ? v.boot : null,
    started: typeof v.started === "number" ? v.started : null,
    since: v.since,
  };
}

export function describeLock(owner: LockOwner): string {
  return `process ${owner.pid} on ${owner.host}, since ${owner.since}`;
}

/** Is the lock's owner still running? */
export async function judgeLock(holder: LockOwner | undefined, me: LockOwner): Promise<LockVerdict> {
  if (!holder) return { kind: "stale", reason: "the lock file names no owner this version can check" };
  if (holder.host !== me.host) {
    // Its processes cannot be seen from here: only a person can tell whether it still runs.
    return { kind: "held", reason: `${describeLock(holder)}, another host` };
  }
  if (holder.boot !== null && me.boot !== null && holder.boot !== me.boot) {
    return { kind: "stale", reason: `${describeLock(holder)}, before the machine restarted` };
  }
  if (holder.pid === me.pid && holder.started === me.started) return { kind: "mine" };
  if (!processIsAlive(holder.pid)) return { kind: "stale", reason: `${describeLock(holder)}, no longer running` };
  const started = await startTime(holder.pid);
  if (holder.started !== null && started !== null && started !== holder.started) {
    return { kind: "stale", reason: `${describeLock(holder)}; pid ${holder.pid} is now another program` };
  }
  return { kind: "held", reason: describeLock(holder) };
}

function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function bootId(): Promise<string | null> {
  const text = await readFile("/proc/sys/kernel/random/boot_id", "utf8").catch(() => null);
  return text === null ? null : text.trim();
}

/** Field 22 of /proc/<pid>/stat, read after the command name (which may hold spaces and parentheses). */
async function startTime(pid: number): Promise<number | null> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (text === null) return null;
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const value = Number(fields[19]);
  return Number.isInteger(value) ? value : null;
}
