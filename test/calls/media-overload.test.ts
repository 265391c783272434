// New calls refused while the media engine does not keep up (issue 17, "Capacity"): the engine's
// frame clock runs on a hand-moved time source whose ticks a test makes late, as a process short
// of CPU would, and the process's CPU is read from a meter the test sets (busy: 2 cores); the
// call engine answers a new INVITE 503 with Retry-After and the reason, starts nothing for it,
// and takes calls again once the clock is back on time.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "../helpers/call-engine.js";
import { until } from "../helpers/fake-signalling.js";
import { busyCpu, LateTime } from "../helpers/late-time.js";

let t: TestEngine;
const time = new LateTime();
/** The server's CPU: 2 cores' worth every second, a second passing between two new calls. */
const cpu = busyCpu(2);
/** A call in progress keeps the frame clock running (its ticks are what the load check reads). */
let stopCallInProgress: () => void = () => undefined;

beforeAll(async () => {
  t = await startTestEngine({ frameClock: { time }, load: { cpu, busyCores: 1.6 } });
  for (const username of ["admin", "agent1"]) await t.phone(username);
  stopCallInProgress = t.media.clock.subscribe(() => undefined);
});
afterAll(async () => {
  stopCallInProgress();
  await t?.close();
});

/** admin dials agent1 (1002): the call rings agent1's phone unless the engine refuses it. */
async function dialAgent() {
  const caller = await (await t.phone("admin")).dial("1002");
  await until(() => caller.state === "ended" || t.engine.channels.get(caller.callId) !== undefined, "the engine to take or refuse the call");
  return caller;
}

describe("a media engine that does not keep up", () => {
  it("takes a call while the frame clock's ticks run on time", async () => {
    time.run(50, 2);
    const caller = await dialAgent();
    const callee = await (await t.phone("agent1")).incoming();
    expect(callee.state).toBe("offered");
    caller.cancel();
    await t.idle();
  });

  it("answers a new call 503 with Retry-After and the reason once 5 of the last second's ticks ran over 40 ms late, and starts nothing for it", async () => {
    time.run(45, 2);
    time.run(5, 60);
    const eventsBefore = t.events.length;
    const cdrs = await t.store.account(t.accountId, "cdrs");
    const cdrsBefore = cdrs.all().length;
    const caller = await dialAgent();
    expect(caller.state).toBe("ended");
    expect(caller.finalCode).toBe(503);
    expect(caller.finalReason).toBe("Media Overloaded");
    expect(caller.finalRetryAfterS).toBe(5);
    expect(t.engine.channels.size).toBe(0);
    expect(t.events.slice(eventsBefore).filter((e) => e.routing_key.startsWith("call."))).toEqual([]);
    expect(cdrs.all()).toHaveLength(cdrsBefore);
    expect(t.warnings.at(-1)).toMatch(/^warn: calls: new call refused .*"reason":"media engine overloaded: 5 of the last 50 frame-clock ticks ran more than 40 ms late \(worst 60 ms\) while the server used 2\.0 cores"/);
    // agent1's phone was never rung.
    await expect((await t.phone("agent1")).incoming(300)).rejects.toThrow();
  });

  it("takes calls again once fewer than 5 of the last second's ticks ran late", async () => {
    time.run(45, 2);
    expect(t.media.refusal()).toBeDefined();
    time.run(1, 2);
    expect(t.media.refusal()).toBeUndefined();
    const caller = await dialAgent();
    const callee = await (await t.phone("agent1")).incoming();
    expect(callee.state).toBe("offered");
    caller.cancel();
    await t.idle();
  });
});
