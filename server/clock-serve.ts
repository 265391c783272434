// Serve mode's `--clock controllable[@START_MS]`: the server runs on a ControllableClock (real
// time, rate 1) that the process which started it can move ahead over its IPC channel, so a test
// waits for no ring timeout or wrap-up (issue 16). Off by default; refused unless the process has
// an IPC channel (only a parent that spawned it with one holds the other end): never over HTTP.
// Audio keeps real time: the media legs stay on the system clock (cli.ts, startServer).
import { ControllableClock } from "./clock-control.js";

export const CLOCK_OPTION = "--clock";

/** What `--clock` asked for; `argv` is the command line without it. */
export interface ServeClockOption {
  argv: string[];
  /** Set for `--clock controllable`: the virtual time to start at (now when not given). */
  controllable?: { startMs?: number };
}

/** A request on the IPC channel: move the clock on by `ms` (`advance`, `jump`) or read it (`now`). */
export interface ClockRequest {
  switchboardClock: { id: number; op: "advance" | "jump" | "now"; ms?: number };
}

/** The answer to a request: the clock's time after it, or why nothing was done. */
export interface ClockReply {
  switchboardClock: { id: number; now?: number; error?: string };
}

/** Takes `--clock V` / `--clock=V` out of `argv`; throws `makeError(message)` for a bad value. */
export function takeClockOption(argv: readonly string[], makeError: (message: string) => Error): ServeClockOption {
  const rest: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (arg === CLOCK_OPTION) {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith("--")) throw makeError(`${CLOCK_OPTION} needs a value: controllable`);
      value = next;
      i++;
    } else if (arg.startsWith(`${CLOCK_OPTION}=`)) value = arg.slice(CLOCK_OPTION.length + 1);
    else rest.push(arg);
  }
  if (value === undefined || value === "system") return { argv: rest };
  const match = /^controllable(?:@(\d{1,16}))?$/.exec(value);
  if (match === null) throw makeError(`${CLOCK_OPTION} must be "system" or "controllable" (optionally "controllable@START_MS"), not ${JSON.stringify(value)}`);
  const startMs = match[1] === undefined ? undefined : Number(match[1]);
  return { argv: rest, controllable: startMs === undefined ? {} : { startMs } };
}

/** The IPC end a controllable clock listens on: a Node child process's `process` when spawned with "ipc". */
export interface ClockChannel {
  send?: (message: unknown) => boolean;
  on(event: "message", listener: (message: unknown) => void): unknown;
}

/**
 * A ControllableClock moved by requests on `channel`; throws `makeError` when there is no IPC
 * channel (the option is then refused, so no other way to move the clock exists).
 */
export function controlledClock(channel: ClockChannel, options: { startMs?: number }, makeError: (message: string) => Error): ControllableClock {
  const send = channel.send?.bind(channel);
  if (send === undefined) throw makeError(`${CLOCK_OPTION} controllable needs an IPC channel from the process that started the server (a test harness); none was given`);
  const clock = new ControllableClock(options.startMs === undefined ? {} : { startMs: options.startMs });
  channel.on("message", (message) => {
    const request = asRequest(message);
    if (request === undefined) return;
    void answer(clock, request).then((reply) => send({ switchboardClock: { id: request.id, ...reply } } satisfies ClockReply));
  });
  return clock;
}

function asRequest(message: unknown): ClockRequest["switchboardClock"] | undefined {
  if (typeof message !== "object" || message === null || !("switchboardClock" in message)) return undefined;
  const body = (message as { switchboardClock: unknown }).switchboardClock;
  if (typeof body !== "object" || body === null) return undefined;
  const { id, op, ms } = body as Record<string, unknown>;
  if (typeof id !== "number") return undefined;
  return { id, op: op as ClockRequest["switchboardClock"]["op"], ...(typeof ms === "number" ? { ms } : {}) };
}

/** Lets the work a timer started (promises, I/O callbacks) run before the next timer falls due. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

async function answer(clock: ControllableClock, request: ClockRequest["switchboardClock"]): Promise<{ now?: number; error?: string }> {
  if (request.op === "now") return { now: clock.now() };
  if (request.op !== "advance" && request.op !== "jump") return { error: `unknown clock operation ${JSON.stringify(request.op)}: advance, jump or now` };
  const ms = request.ms;
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return { error: `a clock ${request.op} needs ms, a finite number of milliseconds >= 0, not ${JSON.stringify(ms)}` };
  const target = clock.now() + ms;
  if (request.op === "advance") {
    // Each timer falling due runs at its own time, its work settling before the next one's.
    for (let due = clock.nextDue(); due !== undefined && due <= target; due = clock.nextDue()) {
      if (due > clock.now()) clock.jumpTo(due);
      clock.runDue();
      await settle();
    }
  }
  if (target > clock.now()) clock.jumpTo(target);
  clock.runDue();
  await settle();
  return { now: clock.now() };
}
