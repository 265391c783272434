// Do not disturb on the call engine with the queue engine wired in: a direct call to a user (or
// to a device) in do not disturb rings nothing and is refused as for a user with no device, the
// flow going on to its child as Kazoo's does; a queue offer to the same user still rings.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { until } from "../helpers/fake-signalling.js";
import { startQueueLab, type QueueLab } from "../callq/harness.js";

let t: QueueLab;

beforeAll(async () => {
  t = await startQueueLab();
  for (const username of ["admin", "agent1", "agent2"]) await t.phone(username);
});
afterEach(async () => {
  for (const username of ["agent1", "agent2"]) {
    const user = await t.user(username);
    const { do_not_disturb: _dnd, ...rest } = user.data;
    await (await t.store.account(t.accountId, "users")).update(user.id, rest);
    await t.callq.recipientAction(t.accountId, user.id, "logout");
  }
  await t.idle();
});
afterAll(async () => {
  await t?.close();
});

async function setDnd(username: string, enabled: boolean): Promise<void> {
  const user = await t.user(username);
  await (await t.store.account(t.accountId, "users")).update(user.id, { ...user.data, do_not_disturb: { enabled } });
}

describe("do not disturb", () => {
  it("refuses a direct call to the user with 480 and rings none of their devices", async () => {
    await setDnd("agent1", true);
    const agentPhone = await t.phone("agent1");
    const rungBefore = agentPhone.calls.length;
    const caller = await (await t.phone("admin")).dial("1002");
    await caller.reaches("ended", 3000);
    expect(caller.finalCode).toBe(480);
    await t.idle();
    expect(agentPhone.calls.length).toBe(rungBefore);
    expect(t.events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${caller.callId}`)?.data).toMatchObject({ hangup_cause: "SUBSCRIBER_ABSENT" });
  });

  it("lets the call through again once turned off", async () => {
    await setDnd("agent1", true);
    await setDnd("agent1", false);
    const caller = await (await t.phone("admin")).dial("1002");
    const offered = await (await t.phone("agent1")).incoming();
    offered.reject(486);
    await caller.reaches("ended", 3000);
    expect(caller.finalCode).toBe(486);
  });

  it("goes on to the flow's child, as Kazoo's user module continues", async () => {
    await setDnd("agent2", true);
    const agent2 = await t.user("agent2");
    const agent1 = await t.user("agent1");
    await t.addCallflow({ numbers: ["7301"], flow: { module: "user", data: { id: agent2.id }, children: { _: { module: "user", data: { id: agent1.id }, children: {} } } } });
    const caller = await (await t.phone("admin")).dial("7301");
    const offered = await (await t.phone("agent1")).incoming();
    expect((await t.phone("agent2")).calls.some((c) => c.callId === caller.callId)).toBe(false);
    offered.reject(486);
    await caller.reaches("ended", 3000);
  });

  it("refuses a direct call to a device in do not disturb, its owner's other devices still ring through the user", async () => {
    const softphone = await t.softphone("agent2");
    const devices = await t.store.account(t.accountId, "devices");
    await devices.update(softphone.id, { ...softphone.data, do_not_disturb: { enabled: true } });
    try {
      await t.addCallflow({ numbers: ["7302"], flow: { module: "device", data: { id: softphone.id }, children: {} } });
      const caller = await (await t.phone("admin")).dial("7302");
      await caller.reaches("ended", 3000);
      expect(caller.finalCode).toBe(480);
    } finally {
      const stored = devices.get(softphone.id);
      if (stored) {
        const { do_not_disturb: _dnd, ...rest } = stored.data;
        await devices.update(softphone.id, rest);
      }
    }
  });

  it("does not keep a queue offer from a Ready agent in do not disturb", async () => {
    await setDnd("agent1", true);
    const agent1 = await t.userId("agent1");
    await t.callq.recipientAction(t.accountId, agent1, "login_ready");
    const agentPhone = await t.phone("agent1");
    const caller = await (await t.phone("admin")).dial("5001");
    await caller.reaches("talking");
    await until(() => agentPhone.calls.some((c) => c.direction === "incoming" && c.state === "offered"), "the queue offer to ring agent1");
    caller.hangup();
    await caller.reaches("ended");
  });
});
