// The callq_recipient module from real phones: the demo feature codes *20..*23 linked by the
// calling device's owner, login_ready, state_toggle and a per-queue ready; the pin link (RFC 4733
// and SIP INFO digits, # or a pause ends the pin, a wrong pin is asked again); `both` falling back
// to the pin; and the distinct success and failure beeps heard by the caller.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PIN_INTER_DIGIT_MS } from "../../server/callq-host/modules/callq-recipient.js";
import { connected, type PhoneCall } from "../helpers/fake-signalling.js";
import { startQueueLab, toneFrames, type QueueLab } from "./harness.js";

let t: QueueLab;
let sales: string;

beforeAll(async () => {
  t = await startQueueLab();
  for (const username of ["admin", "agent1", "agent2", "agent3"]) await t.phone(username);
  sales = await t.queueId("Sales");
  const flow = (data: Record<string, unknown>) => ({ module: "callq_recipient", data, children: {} });
  await t.addCallflow({ numbers: ["7001"], flow: flow({ action: "login_ready", link_method: "device" }) });
  await t.addCallflow({ numbers: ["7002"], flow: flow({ action: "state_toggle", link_method: "device" }) });
  await t.addCallflow({ numbers: ["7003"], flow: flow({ action: "ready", link_method: "device", target_queue: sales }) });
  await t.addCallflow({ numbers: ["7004"], flow: flow({ action: "login", link_method: "pin" }) });
  await t.addCallflow({ numbers: ["7005"], flow: flow({ action: "login", link_method: "device" }) });
  await t.addCallflow({ numbers: ["7006"], flow: flow({ action: "logout", link_method: "pin", success_media: "tone_stream://%(600,0,1700)" }) });
});
afterAll(async () => {
  await t?.close();
});

/** 20 ms frames of each sound: the success beeps (880 + 1320 Hz), the failure beeps (330 Hz), the pin prompt (660 Hz). */
interface Heard {
  success: number;
  failure: number;
  prompt: number;
}

/** Dials `number` from `username`'s phone, runs `during` once answered, and reports the beeps heard until the server hangs up. */
async function dialFeature(username: string, number: string, during?: (call: PhoneCall) => Promise<void>): Promise<Heard> {
  const call = await (await t.phone(username)).dial(number);
  const samples: number[] = [];
  const stop = t.media.clock.subscribe((tick) => {
    if (call.state === "talking") samples.push(...call.leg.incoming.read(tick));
  });
  try {
    await call.reaches("talking");
    await connected(call);
    await during?.(call);
    await call.reaches("ended", 30_000);
  } finally {
    stop();
  }
  expect(call.endedBy).toBe("remote-bye");
  const frames = toneFrames(samples, [880, 1320, 330, 660]);
  return { success: frames[880] + frames[1320], failure: frames[330], prompt: frames[660] };
}

async function stateOf(username: string): Promise<string> {
  return (await t.callq.recipientStatus(t.accountId, await t.userId(username))).availability_state;
}

function expectSuccess(heard: Heard): void {
  expect(heard.success, "the success beeps (400 ms)").toBeGreaterThan(10);
  expect(heard.failure, "no failure beep").toBe(0);
}

function expectFailure(heard: Heard): void {
  expect(heard.failure, "the failure beeps (600 ms)").toBeGreaterThan(15);
  expect(heard.success, "no success beep").toBe(0);
}

describe("callq_recipient linked by the calling device", () => {
  it("logs in (*20), goes ready (*21), away (*22) and logs out (*23) with the demo feature codes", async () => {
    expect(await stateOf("agent1")).toBe("Not-Logged-In");
    expectSuccess(await dialFeature("agent1", "*20"));
    expect(await stateOf("agent1")).toBe("Away");
    expectSuccess(await dialFeature("agent1", "*21"));
    expect(await stateOf("agent1")).toBe("Ready");
    expectSuccess(await dialFeature("agent1", "*22"));
    expect(await stateOf("agent1")).toBe("Away");
    expectSuccess(await dialFeature("agent1", "*23"));
    expect(await stateOf("agent1")).toBe("Not-Logged-In");
    const agent1 = await t.userId("agent1");
    expect(t.eventNames(`callq.recipient.${agent1}`)).toEqual(["login", "ready", "away", "logout"]);
  });

  it("refuses with the failure beep an action the state does not allow (ready while logged out)", async () => {
    expectFailure(await dialFeature("agent1", "*21"));
    expect(await stateOf("agent1")).toBe("Not-Logged-In");
  });

  it("does login_ready, state_toggle both ways, and a ready for one queue (target_queue)", async () => {
    expectSuccess(await dialFeature("agent1", "7001"));
    expect(await stateOf("agent1")).toBe("Ready");
    expectSuccess(await dialFeature("agent1", "7002"));
    expect(await stateOf("agent1")).toBe("Not-Logged-In");
    expectSuccess(await dialFeature("agent1", "7002"));
    expect(await stateOf("agent1")).toBe("Ready");
    expectSuccess(await dialFeature("agent1", "7003"));
    expect((await t.callq.recipientStatus(t.accountId, await t.userId("agent1"))).queue_availability).toEqual({ [sales]: true });
    await t.callq.recipientAction(t.accountId, await t.userId("agent1"), "logout");
  });

  it("fails with the failure beep when the device's owner is no recipient", async () => {
    expectFailure(await dialFeature("admin", "7005"));
  });
});

describe("callq_recipient linked by pin", () => {
  it("falls back to the pin with link_method both: the prompt, then digits ended by # (RFC 4733)", async () => {
    const heard = await dialFeature("admin", "*20", async (call) => {
      await call.leg.sendDtmf("1003#");
    });
    expect(heard.prompt, "the pin prompt (300 ms)").toBeGreaterThan(8);
    expectSuccess(heard);
    expect(await stateOf("agent2")).toBe("Away");
    expect(await stateOf("admin").catch((err: Error) => err.message)).toMatch(/not a call-queue recipient/);
  });

  it("asks again after a wrong pin, and takes a pin ended by a pause (SIP INFO digits)", async () => {
    const started = t.clock.now();
    const heard = await dialFeature("agent1", "7004", async (call) => {
      for (const digit of "9999#") call.info(digit);
      // The failure beep, then the prompt again; digits typed over them are kept.
      for (const digit of "1004") call.info(digit);
      // The pause that ends the pin is the server's to time: its clock moves on to it.
      await t.serverTimeRunsUntil(() => call.state === "ended", "the pause to end the pin");
    });
    expect(t.clock.now() - started).toBeGreaterThanOrEqual(PIN_INTER_DIGIT_MS);
    expect(heard.failure, "the wrong pin's beeps").toBeGreaterThan(15);
    expect(heard.prompt, "the prompt, twice").toBeGreaterThan(20);
    expect(heard.success, "the success beeps").toBeGreaterThan(10);
    expect(await stateOf("agent3")).toBe("Away");
    expect(await stateOf("agent1")).toBe("Not-Logged-In");
  });

  it("plays the flow's success_media instead of the default beeps", async () => {
    const samples: number[] = [];
    const call = await (await t.phone("admin")).dial("7006");
    const stop = t.media.clock.subscribe((tick) => {
      if (call.state === "talking") samples.push(...call.leg.incoming.read(tick));
    });
    await call.reaches("talking");
    await connected(call);
    await call.leg.sendDtmf("1004#");
    await call.reaches("ended", 20_000);
    stop();
    expect(toneFrames(samples, [1700])[1700], "the flow's 600 ms success tone").toBeGreaterThan(20);
    expect(await stateOf("agent3")).toBe("Not-Logged-In");
  });
});
