// A queue's alerts on a real store with the server's time run by hand: each kind (service level
// over a window, longest wait, a member too long in a state) fires once when its limit is crossed
// and clears once when it no longer holds; a queue without limits raises none; after a restart
// nothing is remembered, and what holds then is raised again.
import { Ajv } from "ajv";
import { afterEach, describe, expect, it } from "vitest";
import { EVENT_MESSAGES } from "../../server/events/asyncapi.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

/** The alert events of a queue, as "name kind" strings (with the member for a state alert). */
function alertEvents(r: CallqRig, queue: string): string[] {
  return r.events
    .filter((e) => e.routing_key === `callq.alert.${queue}`)
    .map((e) => {
      const data = e.data as { kind: string; recipient_id?: string; availability_state?: string };
      return [e.name, data.kind, data.recipient_id, data.availability_state].filter((x) => x !== undefined).join(" ");
    });
}

const validAlertEvent = new Ajv({ strict: false, allErrors: true }).compile(EVENT_MESSAGES.callqAlertEvent?.payload ?? {});

/** Every alert event published, as the event socket sends it, is valid for its AsyncAPI message. */
function expectDescribed(r: CallqRig): void {
  const sent = r.events.filter((e) => e.routing_key.startsWith("callq.alert."));
  expect(sent.length).toBeGreaterThan(0);
  for (const e of sent) {
    const message = { action: "event", subscribed_key: "callq.#", name: e.name, routing_key: e.routing_key, account_id: e.account_id, seq: 1, data: e.data };
    expect(validAlertEvent(message), JSON.stringify(validAlertEvent.errors)).toBe(true);
  }
}

async function start(alerts: Record<string, unknown> | undefined, ready = true): Promise<{ r: CallqRig; agent: string; queue: string }> {
  const r = await callqRig();
  rig = r;
  const agent = await r.user("agent");
  if (ready) await r.engine.recipientAction(ACCOUNT, agent, "login_ready");
  const queue = await r.queue({ name: "Q", timeout: 3600, service_level: { answered_within_s: 20, target_percent: 80 }, members: members(agent), ...(alerts ? { alerts } : {}) });
  return { r, agent, queue };
}

/** Seconds on the manual clock, then the engine's microtasks. */
async function wait(r: CallqRig, seconds: number): Promise<void> {
  await r.scheduler.advance(seconds * 1000);
  await settle();
}

describe("the longest-wait alert", () => {
  it("fires once when a caller has waited past the limit and clears once when they are answered", async () => {
    const { r, queue } = await start({ longest_wait_s: 30 });
    const call = new TestCall("c1");
    const done = r.engine.join(ACCOUNT, queue, call);
    await settle();
    await wait(r, 30);
    expect(alertEvents(r, queue)).toEqual([]);
    await wait(r, 1);
    expect(alertEvents(r, queue)).toEqual(["fire longest_wait"]);
    const status = await r.engine.queueStatus(ACCOUNT, queue);
    expect(status.alerts).toMatchObject([{ kind: "longest_wait", queue_id: queue, value: 31, limit: 30 }]);
    await wait(r, 20);
    expect(alertEvents(r, queue)).toEqual(["fire longest_wait"]);
    const end = call.last().answer();
    await settle();
    expect(alertEvents(r, queue)).toEqual(["fire longest_wait", "clear longest_wait"]);
    expect((await r.engine.queueStatus(ACCOUNT, queue)).alerts).toEqual([]);
    end();
    await done;
    expectDescribed(r);
  });

  it("clears when the caller hangs up", async () => {
    const { r, queue } = await start({ longest_wait_s: 10 }, false);
    const call = new TestCall("c1");
    const done = r.engine.join(ACCOUNT, queue, call);
    await settle();
    await wait(r, 12);
    expect(alertEvents(r, queue)).toEqual(["fire longest_wait"]);
    call.hangup();
    await done;
    await settle();
    expect(alertEvents(r, queue)).toEqual(["fire longest_wait", "clear longest_wait"]);
  });
});

describe("the service-level alert", () => {
  it("fires when the window's service level is below target and clears once the window has moved past it", async () => {
    const { r, queue } = await start({ service_level_window_s: 300 }, false);
    // One caller hangs up after 30 s: 0% of those who stopped waiting in the window.
    const call = new TestCall("late");
    const done = r.engine.join(ACCOUNT, queue, call);
    await settle();
    await wait(r, 30);
    expect(alertEvents(r, queue)).toEqual([]);
    call.hangup();
    await done;
    await settle();
    expect(alertEvents(r, queue)).toEqual(["fire service_level"]);
    expect((await r.engine.queueStatus(ACCOUNT, queue)).alerts).toMatchObject([{ kind: "service_level", value: 0, limit: 80 }]);
    // The day's figure stays 0%, but the window moves on: 300 s after the hang-up nobody is in it.
    await wait(r, 299);
    expect(alertEvents(r, queue)).toEqual(["fire service_level"]);
    await wait(r, 2);
    expect(alertEvents(r, queue)).toEqual(["fire service_level", "clear service_level"]);
    expect((await r.engine.queueStatus(ACCOUNT, queue)).stats.service_level).toBe(0);
    expectDescribed(r);
  });

  it("clears when answers in time bring the window's figure up to the target", async () => {
    const { r, agent, queue } = await start({ service_level_window_s: 3600 }, false);
    const lost = new TestCall("lost");
    const lostDone = r.engine.join(ACCOUNT, queue, lost);
    await settle();
    await wait(r, 5);
    lost.hangup();
    await lostDone;
    await settle();
    expect(alertEvents(r, queue)).toEqual(["fire service_level"]);
    await r.engine.recipientAction(ACCOUNT, agent, "login_ready");
    // 4 answered within 20 s of 5: 80%, the target, which is not below it.
    for (let i = 1; i <= 4; i += 1) {
      const call = new TestCall(`c${i}`);
      const done = r.engine.join(ACCOUNT, queue, call);
      await settle();
      const end = call.last().answer();
      await settle();
      expect(alertEvents(r, queue)).toEqual(i < 4 ? ["fire service_level"] : ["fire service_level", "clear service_level"]);
      end();
      await done;
      await settle();
    }
  });
});

describe("the state alert", () => {
  it("fires once for a member Away past its limit and clears once when they are Ready", async () => {
    const { r, agent, queue } = await start({ state_limits: { Away: 60 } });
    await r.engine.recipientAction(ACCOUNT, agent, "away");
    await settle();
    await wait(r, 60);
    expect(alertEvents(r, queue)).toEqual([]);
    await wait(r, 1);
    expect(alertEvents(r, queue)).toEqual([`fire state_too_long ${agent} Away`]);
    await wait(r, 120);
    expect(alertEvents(r, queue)).toHaveLength(1);
    expect((await r.engine.queueStatus(ACCOUNT, queue)).alerts).toMatchObject([{ kind: "state_too_long", recipient_id: agent, availability_state: "Away", value: 61, limit: 60 }]);
    await r.engine.recipientAction(ACCOUNT, agent, "ready");
    await settle();
    expect(alertEvents(r, queue)).toEqual([`fire state_too_long ${agent} Away`, `clear state_too_long ${agent} Away`]);
    expectDescribed(r);
  });

  it("holds a member on a call to the On-A-Call limit and not to another state's", async () => {
    const { r, agent, queue } = await start({ state_limits: { "On-A-Call": 120 } });
    const call = new TestCall("c1");
    const done = r.engine.join(ACCOUNT, queue, call);
    await settle();
    const end = call.last().answer();
    await settle();
    await wait(r, 121);
    expect(alertEvents(r, queue)).toEqual([`fire state_too_long ${agent} On-A-Call`]);
    end();
    await done;
    await settle();
    expect(alertEvents(r, queue)).toEqual([`fire state_too_long ${agent} On-A-Call`, `clear state_too_long ${agent} On-A-Call`]);
  });
});

describe("alerts not configured", () => {
  it("raise nothing however long a caller waits or a member is Away", async () => {
    const { r, agent, queue } = await start(undefined);
    await r.engine.recipientAction(ACCOUNT, agent, "away");
    const call = new TestCall("c1");
    const done = r.engine.join(ACCOUNT, queue, call);
    await settle();
    await wait(r, 600);
    call.hangup();
    await done;
    await settle();
    expect(r.events.filter((e) => e.routing_key.startsWith("callq.alert."))).toEqual([]);
    expect((await r.engine.queueStatus(ACCOUNT, queue)).alerts).toEqual([]);
  });
});

describe("alerts across a restart", () => {
  it("are not remembered, but what still holds is raised again", async () => {
    const { r, agent, queue } = await start({ state_limits: { Away: 60 } });
    await r.engine.recipientAction(ACCOUNT, agent, "away");
    await wait(r, 61);
    expect(alertEvents(r, queue)).toEqual([`fire state_too_long ${agent} Away`]);
    const before = r.scheduler.now();
    const again = await r.restart();
    rig = again;
    expect(alertEvents(again, queue)).toEqual([]);
    // The new server's clock goes on from where the old one stopped; the member's away_since
    // survives, so they are still Away past the limit: raised again within a second.
    await again.scheduler.advance(before - again.scheduler.now());
    await wait(again, 1);
    expect((await again.engine.queueStatus(ACCOUNT, queue)).alerts).toMatchObject([{ kind: "state_too_long", recipient_id: agent }]);
    expect(alertEvents(again, queue)).toEqual([`fire state_too_long ${agent} Away`]);
  });
});
