// The simulated caller over HTTP on a started server whose devices are fake phones with real
// werift legs: it dials an extension like a device, the answering phone hears its audio, its DTMF
// reaches the channel and crosses the bridge, its hang-up ends both legs with CDRs; cancel before
// an answer, refusals, the channel rows (authorizing_type "sim"), bad input and access.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChannelDtmf } from "../../server/calls/channel.js";
import type { BusEvent } from "../../server/events/index.js";
import type { TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";

interface SimRow {
  id: string;
  to: string;
  caller_id_name: string;
  caller_id_number: string;
  audio: string;
  state: string;
  media: string;
  timestamp: number;
}

let t: CallApi;
let api: TestApi;
let token: string;
let base: string;
const events: BusEvent[] = [];

beforeAll(async () => {
  t = await startCallApi();
  ({ api, token, base } = t);
  api.server.events.bus.subscribe((e) => events.push(e));
});
afterAll(async () => {
  await t?.close();
});

const phone = (username: string): FakePhone => t.phone(username);
const simCall = (data: Record<string, unknown>, as = token) => api.call<SimRow>("POST", `${base}/sim/calls`, { token: as, data });
const drive = (id: string, data: Record<string, unknown>, as = token) => api.call<string>("POST", `${base}/sim/calls/${id}`, { token: as, data });
const customer = { to: "1002", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "tone_stream://1200" };

async function noChannels(): Promise<void> {
  await until(() => api.server.calls.channels.size === 0, "every channel to end");
}

/** A simulated customer's call to agent1, answered, media up. */
async function answeredSimCall(data = customer): Promise<{ id: string; offered: PhoneCall }> {
  const id = (await simCall(data)).body.data.id;
  const offered = await phone("agent1").incoming();
  await offered.answer();
  await connected(offered);
  return { id, offered };
}

describe("a simulated caller", () => {
  it("dials an extension like a device; the phone that answers hears its audio", async () => {
    const started = await simCall(customer);
    expect(started.status, started.text).toBe(201);
    const id = started.body.data.id;
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(started.headers.get("location")).toBe(`${base}/sim/calls/${id}`);
    // Its media is not up before an answer: no answer SDP has reached its leg yet.
    expect(started.body.data).toMatchObject({ to: "1002", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: "tone_stream://1200", media: "connecting" });

    const offered = await phone("agent1").incoming();
    expect(offered.from).toEqual({ user: "+14155550100", display: "Casey Customer" });
    offered.ring();
    await until(() => api.server.calls.channels.get(id)?.state === "ringing", "the caller to hear ringing");
    expect((await api.call<SimRow>("GET", `${base}/sim/calls/${id}`, { token })).body.data).toMatchObject({ state: "ringing", media: "connecting" });
    await offered.answer();
    await connected(offered);
    // Answered, its leg connects with the server's (ICE, DTLS), and the row says so.
    await poll("the caller's media to connect", async () => ((await api.call<SimRow>("GET", `${base}/sim/calls/${id}`, { token })).body.data.media === "connected" ? true : undefined), 45_000);
    const heard = await offered.hears([1200, 440], 400);
    expect(heard[1200]).toBeGreaterThan(0.9);
    expect(heard[440]).toBeLessThan(0.01);

    const list = await api.call<SimRow[]>("GET", `${base}/sim/calls`, { token });
    expect(list.body.data).toEqual([expect.objectContaining({ id, state: "answered", media: "connected", timestamp: expect.any(Number) })]);
    // The engine took it as any caller: a channel with the caller id given, authorised as "sim".
    const channel = await api.call<Record<string, unknown>>("GET", `${base}/channels/${id}`, { token });
    expect(channel.body.data).toMatchObject({
      uuid: id,
      direction: "inbound",
      authorizing_type: "sim",
      authorizing_id: id,
      destination: "1002",
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      other_leg: offered.callId,
      state: "bridged",
    });

    expect((await drive(id, { action: "hangup" })).status).toBe(202);
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("remote-bye");
    await noChannels();
  });

  it("sends DTMF on its leg: the channel hears the digits and they cross the bridge", async () => {
    const { id, offered } = await answeredSimCall();
    const channel = api.server.calls.channels.get(id);
    const seen: ChannelDtmf[] = [];
    channel?.on("dtmf", (d) => seen.push(d));
    const sent = await drive(id, { action: "dtmf", digits: "5#" });
    expect(sent.status).toBe(202);
    expect(sent.body.data).toBe("dtmf sent");
    await until(() => seen.length === 2 && offered.dtmfIn.length === 2, "both digits at the channel and the phone");
    expect(seen.map((d) => `${d.digit}:${d.via}`)).toEqual(["5:rfc4733", "#:rfc4733"]);
    expect(offered.dtmfIn.map((d) => d.digit)).toEqual(["5", "#"]);
    offered.hangup();
    await noChannels();
  });

  it("hangs up: both legs end, each with its CDR, and the call is gone from the list", async () => {
    const { id, offered } = await answeredSimCall();
    expect((await drive(id, { action: "hangup" })).body.data).toBe("hangup initiated");
    await offered.reaches("ended");
    await noChannels();
    const cdrs = await poll("both CDRs", async () => {
      const rows = (await api.call<{ call_id: string; hangup_cause: string; authorizing_type: string }[]>("GET", `${base}/cdrs`, { token })).body.data;
      const mine = rows.filter((r) => r.call_id === id || r.call_id === offered.callId);
      return mine.length === 2 ? mine : undefined;
    });
    expect(cdrs.find((r) => r.call_id === id)).toMatchObject({ hangup_cause: "NORMAL_CLEARING", authorizing_type: "sim" });
    expect(cdrs.find((r) => r.call_id === offered.callId)).toMatchObject({ hangup_cause: "NORMAL_CLEARING" });
    expect((await api.call<SimRow[]>("GET", `${base}/sim/calls`, { token })).body.data).toEqual([]);
    const again = await drive(id, { action: "hangup" });
    expect(again.status).toBe(404);
    expect(again.body).toMatchObject({ message: "bad_identifier", data: { cause: id } });
  });

  it("hangs up before an answer: the ringing phone is cancelled", async () => {
    const id = (await simCall(customer)).body.data.id;
    const offered = await phone("agent1").incoming();
    offered.ring();
    expect((await drive(id, { action: "hangup" })).status).toBe(202);
    await offered.reaches("ended");
    expect(offered.endedBy).toBe("cancelled");
    await noChannels();
  });

  it("is refused like any caller: an unknown number ends it, and it leaves the list", async () => {
    const id = (await simCall({ ...customer, to: "9999" })).body.data.id;
    await poll("the refused call to leave the list", async () => ((await api.call<SimRow[]>("GET", `${base}/sim/calls`, { token })).body.data.some((r) => r.id === id) ? undefined : true));
    const destroy = events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${id}`);
    expect(destroy?.data).toMatchObject({ hangup_cause: "UNALLOCATED_NUMBER", authorizing_type: "sim" });
  });

  it("plays a media of the account by its id", async () => {
    const media = await api.call<{ id: string; name: string }[]>("GET", `${base}/media`, { token });
    const holdMusic = media.body.data.find((m) => m.name === "Hold music");
    const { id, offered } = await answeredSimCall({ ...customer, audio: holdMusic?.id ?? "" });
    const samples = await offered.record(400);
    expect(samples.some((s) => Math.abs(s) > 1000)).toBe(true);
    await drive(id, { action: "hangup" });
    await noChannels();
  });
});

describe("the simulated calls API", () => {
  const fieldOf = (res: { status: number; body: { message?: string; data: unknown } }) => ({ status: res.status, message: res.body.message, data: res.body.data });

  it("answers 400 naming the field for bad input", async () => {
    const missing = await simCall({ caller_id_number: "+14155550100", audio: "tone_stream://1200" });
    expect(fieldOf(missing)).toMatchObject({ status: 400, message: "validation error", data: { to: { required: expect.any(Object) } } });
    const badTo = await simCall({ ...customer, to: "10 02" });
    expect(fieldOf(badTo)).toMatchObject({ status: 400, data: { to: { pattern: expect.any(Object) } } });
    const noAudio = await simCall({ ...customer, audio: undefined });
    expect(fieldOf(noAudio)).toMatchObject({ status: 400, data: { audio: { required: expect.any(Object) } } });
    const badUri = await simCall({ ...customer, audio: "https://example.com/x.wav" });
    expect(fieldOf(badUri)).toMatchObject({ status: 400, data: { audio: { format: { value: "https://example.com/x.wav" } } } });
    const badTone = await simCall({ ...customer, audio: "tone_stream://%(nonsense)" });
    expect(fieldOf(badTone)).toMatchObject({ status: 400, data: { audio: { format: expect.any(Object) } } });
    const noMedia = await simCall({ ...customer, audio: "f".repeat(32) });
    expect(fieldOf(noMedia)).toMatchObject({ status: 400, data: { audio: { not_found: { value: "f".repeat(32) } } } });
    expect(api.server.calls.channels.size).toBe(0);
  });

  it("refuses bad actions and ids", async () => {
    const id = (await simCall(customer)).body.data.id;
    const offered = await phone("agent1").incoming();
    const early = await drive(id, { action: "dtmf", digits: "1" });
    expect(fieldOf(early)).toMatchObject({ status: 400, message: "invalid data", data: { action: { dtmf: expect.any(Object) } } });
    await offered.answer();
    await connected(offered);
    expect(fieldOf(await drive(id, { action: "transfer" }))).toMatchObject({ status: 400, message: "invalid data", data: { action: { enum: { value: "transfer" } } } });
    expect(fieldOf(await drive(id, {}))).toMatchObject({ status: 400, data: { action: { required: expect.any(Object) } } });
    expect(fieldOf(await drive(id, { action: "dtmf" }))).toMatchObject({ status: 400, data: { digits: { required: expect.any(Object) } } });
    expect(fieldOf(await drive(id, { action: "dtmf", digits: "12x" }))).toMatchObject({ status: 400, data: { digits: { pattern: expect.any(Object) } } });
    const unknown = await drive("0".repeat(32), { action: "hangup" });
    expect(fieldOf(unknown)).toMatchObject({ status: 404, message: "bad_identifier", data: { cause: "0".repeat(32) } });
    expect((await api.call("GET", `${base}/sim/calls/${"0".repeat(32)}`, { token })).status).toBe(404);
    await drive(id, { action: "hangup" });
    await noChannels();
  });

  it("lets any user of the account list simulated calls, and only admins start or drive them", async () => {
    const agent = await api.login("agent2");
    const id = (await simCall(customer)).body.data.id;
    const offered = await phone("agent1").incoming();
    const listed = await api.call<SimRow[]>("GET", `${base}/sim/calls`, { token: agent.token });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((r) => r.id)).toEqual([id]);
    expect((await simCall(customer, agent.token)).status).toBe(403);
    expect((await drive(id, { action: "hangup" }, agent.token)).status).toBe(403);
    expect((await api.call("GET", `${base}/sim/calls`)).status).toBe(401);
    await drive(id, { action: "hangup" });
    await offered.reaches("ended");
    await noChannels();
  });
});
