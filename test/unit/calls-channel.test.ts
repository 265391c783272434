// The channel's state machine: one bus event per arrow, stamped by the injected clock, illegal
// arrows refused, the SIP side ended as far as the call got, and the far end's hangups heard.
import { describe, expect, it } from "vitest";
import { Channel, IllegalChannelTransition } from "../../server/calls/channel.js";
import { EventBus, type BusEvent } from "../../server/events/bus.js";
import { identity, ManualClock, StubInbound, StubLeg, StubOutbound } from "../helpers/channel-stubs.js";

/** A bus that keeps what it hears, on a clock the test moves. */
function recordedBus() {
  const clock = new ManualClock();
  const bus = new EventBus(clock);
  const events: BusEvent[] = [];
  bus.subscribe((e) => events.push(e));
  return { clock, bus, events };
}

function inbound() {
  const { clock, bus, events } = recordedBus();
  const call = new StubInbound();
  const media = new StubLeg();
  const channel = new Channel({ sip: { direction: "inbound", call }, media, identity: identity(), clock, bus });
  return { channel, call, media, events, clock };
}

function outbound() {
  const { clock, bus, events } = recordedBus();
  const call = new StubOutbound();
  const channel = new Channel({ sip: { direction: "outbound", call }, media: new StubLeg(), identity: identity({ deviceId: "e".repeat(32) }), clock, bus });
  return { channel, call, events };
}

const flush = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("channel state machine", () => {
  it("publishes CHANNEL_CREATE, then one event per arrow, with the durations of the clock", async () => {
    const { channel, call, events, clock } = inbound();
    await clock.advance(1000);
    channel.ring();
    await clock.advance(2000);
    expect(await channel.answer()).toBe(true);
    await clock.advance(7500);
    channel.hangup();
    expect(events.map((e) => e.routing_key)).toEqual([
      "call.CHANNEL_CREATE.inbound-1",
      "call.CHANNEL_PROGRESS.inbound-1",
      "call.CHANNEL_ANSWER.inbound-1",
      "call.CHANNEL_DESTROY.inbound-1",
    ]);
    expect(call.actions).toEqual(["180", "200 answer to offer-sdp", "BYE"]);
    expect(events[3]?.data).toMatchObject({
      call_id: "inbound-1",
      call_direction: "inbound",
      caller_id_name: "Ada Admin",
      hangup_cause: "NORMAL_CLEARING",
      hangup_code: "sip:200",
      duration_seconds: 10,
      billing_seconds: 7,
      ringing_seconds: 2,
    });
    expect(events.every((e) => e.account_id === "a".repeat(32))).toBe(true);
  });

  it("goes bridged, held, bridged again and back to answered through the bridge's arrows", async () => {
    const { channel, events } = inbound();
    await channel.answer();
    channel.joined("other-leg");
    channel.holding(true);
    channel.holding(false);
    channel.left();
    expect(events.map((e) => e.name).slice(2)).toEqual(["CHANNEL_BRIDGE", "CHANNEL_HOLD", "CHANNEL_UNHOLD", "CHANNEL_UNBRIDGE"]);
    expect(events[2]?.data.other_leg_call_id).toBe("other-leg");
    expect(channel.everBridged).toBe(true);
    expect(channel.state).toBe("answered");
  });

  it("refuses arrows the diagram does not have, and ignores hold when not bridged", async () => {
    const { channel, events } = inbound();
    expect(() => channel.joined("x")).toThrow(IllegalChannelTransition);
    await channel.answer();
    channel.holding(true);
    expect(channel.state).toBe("answered");
    channel.hangup();
    expect(() => channel.joined("x")).toThrow(IllegalChannelTransition);
    expect(events.filter((e) => e.name === "CHANNEL_DESTROY")).toHaveLength(1);
  });

  it("refuses an unanswered caller with the code, never a 2xx, and hangs up only once", () => {
    const { channel, call, media } = inbound();
    channel.hangup("NORMAL_CLEARING");
    channel.hangup("USER_BUSY", 486);
    expect(call.actions).toEqual(["reject 480"]);
    expect(channel.hangupCode).toBe(480);
    expect(media.closedWith).toBe("hangup");
  });

  it("hears the caller's CANCEL and BYE", async () => {
    const cancelled = inbound();
    cancelled.call.emit("cancel");
    expect(cancelled.channel.state).toBe("hungup");
    expect(cancelled.channel.hangupCause).toBe("ORIGINATOR_CANCEL");
    expect(await cancelled.channel.answer()).toBe(false);

    const byed = inbound();
    await byed.channel.answer();
    byed.call.emit("bye");
    expect(byed.channel.hangupCause).toBe("NORMAL_CLEARING");
    expect(byed.call.actions).not.toContain("BYE");
  });

  it("an outbound leg rings, answers with the device's SDP, and is cancelled or refused", async () => {
    const answered = outbound();
    answered.call.emit("ringing");
    answered.call.emit("answered", "device-sdp");
    await flush();
    expect(answered.events.map((e) => e.name)).toEqual(["CHANNEL_CREATE", "CHANNEL_PROGRESS", "CHANNEL_ANSWER"]);

    const cancelled = outbound();
    cancelled.channel.hangup("LOSE_RACE");
    expect(cancelled.call.actions).toEqual(["CANCEL"]);
    expect(cancelled.channel.hangupCode).toBe(487);

    const refused = outbound();
    refused.call.emit("rejected", 486, "Busy Here");
    expect(refused.channel.hangupCause).toBe("USER_BUSY");
    expect(refused.channel.hangupCode).toBe(486);
    expect(refused.call.actions).toEqual([]);
  });

  it("answers a hold re-INVITE and reports the hold; reports DTMF from INFO and RFC 4733", async () => {
    const { channel, call, media } = inbound();
    await channel.answer();
    const holds: boolean[] = [];
    const digits: string[] = [];
    channel.on("hold", (on) => holds.push(on));
    channel.on("dtmf", (d) => digits.push(`${d.digit}/${d.via}`));
    let answered = "";
    call.emit("reinvite", "v=0\r\na=sendonly\r\n", { answer: (sdp) => (answered = sdp), reject: () => undefined });
    await flush();
    expect(answered).toBe("answer to v=0\r\na=sendonly\r\n");
    call.emit("reinvite", "v=0\r\na=sendrecv\r\n", { answer: () => undefined, reject: () => undefined });
    await flush();
    expect(holds).toEqual([true, false]);
    call.emit("dtmf", { digit: "5" });
    media.emit("dtmf", { digit: "#", durationMs: 100 });
    expect(digits).toEqual(["5/info", "#/rfc4733"]);
  });

  it("a claim aborts the previous owner's signal; the hangup aborts the last one", () => {
    const { channel } = inbound();
    const first = channel.claim("first");
    const second = channel.claim("second");
    expect(first.aborted).toBe(true);
    expect(second.aborted).toBe(false);
    channel.hangup();
    expect(second.aborted).toBe(true);
    expect(channel.claim().aborted).toBe(true);
  });

  it("a media leg that dies under a live call hangs it up", async () => {
    const { channel, media } = inbound();
    await channel.answer();
    media.emit("state", { from: "connected", to: "closed", at: 0, reason: "ice failed" });
    expect(channel.hangupCause).toBe("MEDIA_TIMEOUT");
  });
});

describe("waiting for a caller's media (callq modules)", () => {
  it("stops listening to the leg once the media is up or the wait gave up, so a long call keeps no listener per queue call", async () => {
    const { mediaUp } = await import("../../server/callq-host/modules/prompts.js");
    const { channel, media, clock } = inbound();
    const before = media.listenerCount("state");
    const up = mediaUp(clock, channel);
    expect(media.listenerCount("state")).toBe(before + 1);
    media.emit("state", { from: "negotiating", to: "connected", at: 0 });
    await up;
    expect(media.listenerCount("state")).toBe(before);
  });
});
