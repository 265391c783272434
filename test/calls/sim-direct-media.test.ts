// A simulated caller with direct media (a training run's callers): its audio and digits cross to
// the server's side of the call in memory, so the server's media engine holds no leg for it (one
// leg in all: the answering phone's), while a WebRTC caller costs three (its own, the server's
// inbound one, the phone's). Both ways heard: the caller answers the agent's "prompt" with a digit
// (it heard the agent) and then plays a tone that the agent's phone hears; its hang-up ends both
// channels with CDRs authorised as "sim".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelDtmf } from "../../server/calls/channel.js";
import type { TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, until } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";
import { systemClock } from "../../server/clock.js";

let t: CallApi;
let api: TestApi;

beforeAll(async () => {
  t = await startCallApi();
  api = t.api;
});
afterAll(async () => {
  await t?.close();
});

const serverLegs = (): number => api.server.media.legs.size;
const noChannels = () => until(() => api.server.calls.channels.size === 0 && serverLegs() === 0, "every channel and leg to end");

describe("a simulated caller with direct media", () => {
  it("talks both ways with the agent through the bridge, with no media leg of its own", async () => {
    const caller = await api.server.sim.start(t.accountId, {
      to: "1002",
      callerIdName: "Dana Direct",
      callerIdNumber: "+14155550111",
      behaviour: {
        script: {
          // The digit once it has heard a prompt (sound, then quiet): only the agent's voice can be it.
          steps: [{ kind: "digits", digits: "7" }, { kind: "play", media: "tone_stream://1200" }],
          asksForSupervisor: false,
          language: "en-US",
        },
      },
      media: "direct",
    });
    // Its media is up from the start (an in-memory pair: nothing to connect), as GET /sim/calls says.
    expect(caller.media).toBe("connected");
    const offered = await t.phone("agent1").incoming();
    expect(offered.from).toEqual({ user: "+14155550111", display: "Dana Direct" });
    // Ringing agent1: the server's leg towards the phone is the only one.
    expect(serverLegs()).toBe(1);
    const channel = api.server.calls.channels.get(caller.id);
    expect(channel?.identity.authorizingType).toBe("sim");
    const seen: ChannelDtmf[] = [];
    channel?.on("dtmf", (d) => seen.push(d));

    await offered.answer();
    await connected(offered);
    await until(() => caller.state === "answered", "the caller to hear the answer");
    await offered.say("tone_stream://%(600,0,700)");
    await until(() => offered.dtmfIn.length === 1, "the caller's digit at the phone", 15_000);
    expect(offered.dtmfIn.map((d) => d.digit)).toEqual(["7"]);
    expect(seen.map((d) => d.digit)).toEqual(["7"]);
    await until(() => caller.progress?.step === 1, "the caller to start its tone");
    const heard = await offered.hears([1200, 700], 400);
    expect(heard[1200]).toBeGreaterThan(0.9);
    expect(heard[700]).toBeLessThan(0.01);
    expect(serverLegs()).toBe(1);

    caller.hangup();
    await offered.reaches("ended");
    await noChannels();
    const cdrs = await poll("both CDRs", async () => {
      const rows = (await api.call<{ call_id: string; hangup_cause: string; authorizing_type?: string }[]>("GET", `${t.base}/cdrs`, { token: t.token })).body.data;
      const mine = rows.filter((r) => r.call_id === caller.id || r.call_id === offered.callId);
      return mine.length === 2 ? mine : undefined;
    });
    expect(cdrs.find((r) => r.call_id === caller.id)).toMatchObject({ hangup_cause: "NORMAL_CLEARING", authorizing_type: "sim" });
    expect(cdrs.find((r) => r.call_id === offered.callId)).toMatchObject({ hangup_cause: "NORMAL_CLEARING" });
  });

  it("against a WebRTC caller (the default): that one has a leg of its own and the server's leg facing it", async () => {
    const caller = await api.server.sim.start(t.accountId, {
      to: "1002",
      callerIdName: "Wes WebRTC",
      callerIdNumber: "+14155550112",
      behaviour: { audio: "tone_stream://1200" },
    });
    const offered = await t.phone("agent1").incoming();
    await offered.answer();
    await connected(offered);
    expect(serverLegs()).toBe(3);
    const heard = await offered.hears([1200], 400);
    expect(heard[1200]).toBeGreaterThan(0.9);
    caller.hangup();
    await offered.reaches("ended");
    await noChannels();
  });

  it("is answered by a simulated agent's bot phone with direct media: the call crosses no media leg at all", async () => {
    const devices = (await api.call<{ id: string; username: string }[]>("GET", `${t.base}/devices`, { token: t.token })).body.data;
    const device = devices.find((d) => d.username === "agent2");
    if (!device) throw new Error("no agent2 device");
    const answered: string[] = [];
    const release = api.server.sim.botPhone(
      { accountId: t.accountId, deviceId: device.id },
      { clock: systemClock, ringDelayMs: 200, nextTalkMs: () => 1_500, directMedia: true, onAnswered: (id) => answered.push(id) },
    );
    try {
      const caller = await api.server.sim.start(t.accountId, {
        to: "1003",
        callerIdName: "Bo Bot-Caller",
        callerIdNumber: "+14155550113",
        behaviour: { audio: "tone_stream://1200" },
        media: "direct",
      });
      await until(() => answered.length === 1 && caller.state === "answered", "the bot to answer");
      const bridged = api.server.calls.channels.get(answered[0]);
      await until(() => bridged?.state === "bridged", "the bot's leg bridged");
      expect(serverLegs()).toBe(0);
      // The bot hangs up after its talk time: both channels end, each with its CDR.
      await until(() => caller.state === "ended", "the bot to hang up", 10_000);
      await noChannels();
      const cdrs = await poll("both CDRs", async () => {
        const rows = (await api.call<{ call_id: string; hangup_cause: string }[]>("GET", `${t.base}/cdrs`, { token: t.token })).body.data;
        const mine = rows.filter((r) => r.call_id === caller.id || r.call_id === answered[0]);
        return mine.length === 2 ? mine : undefined;
      });
      expect(cdrs.map((r) => r.hangup_cause).sort()).toEqual(["NORMAL_CLEARING", "NORMAL_CLEARING"]);
    } finally {
      release();
    }
  });
});
