// Call recording end to end with fake signalling and real werift legs: a call whose user, device or
// callflow asks for it leaves a stereo WAV (caller's voice left, callee's right) on a `recordings`
// document with the call's fields; nobody asking records nothing; a device's refusal beats its
// user; time_limit and record_min_sec; then a simulated customer's call recorded and fetched,
// ranged and deleted over HTTP on a started server.
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CDRS_COLLECTION, RECORDING_ATTACHMENT, RECORDINGS_COLLECTION, type Channel } from "../../server/calls/index.js";
import type { Collection, DocData, StoredDoc } from "../../server/store/index.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { startTestEngine, type TestEngine } from "../helpers/call-engine.js";
import { connected, sleep, until, type PhoneCall } from "../helpers/fake-signalling.js";
import { middleShare, readStereoWav } from "../helpers/stereo-wav.js";

// Neither tone is a harmonic of the other, so each channel's share of the other stays near 0.
const CALLER_TONE = 700;
const CALLEE_TONE = 1300;

let t: TestEngine;
beforeAll(async () => {
  t = await startTestEngine();
  for (const username of ["admin", "agent1", "agent2", "agent3"]) await t.phone(username);
});
afterAll(async () => {
  await t?.close();
});

async function setRecording(collection: "users" | "devices", id: string, callRecording: unknown): Promise<void> {
  const docs = await t.store.account(t.accountId, collection);
  const doc = docs.get(id);
  if (!doc) throw new Error(`no ${collection} ${id}`);
  const data: DocData = { ...doc.data, call_recording: callRecording };
  if (callRecording === undefined) delete data.call_recording;
  await docs.update(id, data);
}

/** admin calls `number`, `callee` answers, each says its tone for `talkMs`, admin hangs up. */
async function call(number: string, callee: string, talkMs = 1500): Promise<{ caller: PhoneCall; answered: PhoneCall }> {
  const caller = await (await t.phone("admin")).dial(number);
  const answered = await (await t.phone(callee)).incoming();
  await answered.answer();
  await caller.reaches("talking");
  await connected(caller, answered);
  await caller.say(`tone_stream://${CALLER_TONE}`);
  await answered.say(`tone_stream://${CALLEE_TONE}`);
  await sleep(talkMs);
  caller.hangup();
  await t.idle();
  await t.engine.recordings.flush();
  return { caller, answered };
}

async function recordings(): Promise<Collection> {
  return t.store.account(t.accountId, RECORDINGS_COLLECTION);
}

async function recordingOf(callId: string): Promise<StoredDoc | undefined> {
  return (await recordings()).all().find((d) => d.data.call_id === callId);
}

async function audioOf(doc: StoredDoc): Promise<Buffer> {
  const collection = await recordings();
  return readFile(join(collection.file.replace(/\.json$/, ".attachments"), doc.id, RECORDING_ATTACHMENT));
}

describe("recording a call", () => {
  it("records a call to a user who asks for inbound calls: a stereo WAV, caller left, callee right, with its document", async () => {
    const agent = await t.user("agent1");
    await setRecording("users", agent.id, { inbound: { onnet: { enabled: true } } });
    const callFrom = performance.now();
    const { caller, answered } = await call("1002", "agent1");
    const callWallMs = performance.now() - callFrom;
    await setRecording("users", agent.id, undefined);

    const doc = await recordingOf(caller.callId);
    expect(doc?.id).toMatch(/^\d{6}-[0-9a-f]{32}$/);
    expect(doc?.data).toMatchObject({
      call_id: caller.callId,
      caller_id_name: "Ada Admin",
      caller_id_number: "1001",
      callee_id_name: "Alex Agent",
      callee_id_number: "1002",
      direction: "inbound",
      media_type: "wav",
      content_type: "audio/wav",
      origin: "inbound from onnet to user",
      owner_id: agent.id,
      source_type: "kz_media_recording",
      name: `call_recording_${caller.callId}.wav`,
    });
    const durationMs = Number(doc?.data.duration_ms);
    expect(durationMs).toBeGreaterThanOrEqual(1200);
    // Its frames are the frame clock's, which never runs ahead of real time: no longer than the
    // call took here, a frame aside (not "under 5 s", which a busy machine can break).
    expect(durationMs).toBeLessThanOrEqual(callWallMs + 20);
    expect(Number(doc?.data.start)).toBeGreaterThan(63_000_000_000);
    expect(doc?.attachments?.[RECORDING_ATTACHMENT]?.content_type).toBe("audio/wav");

    const wav = readStereoWav(await audioOf(doc as StoredDoc));
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000, bitsPerSample: 16 });
    expect(wav.left.length).toBe((durationMs * 8000) / 1000);
    expect(middleShare(wav.left, CALLER_TONE), "left: the caller's voice").toBeGreaterThan(0.8);
    expect(middleShare(wav.left, CALLEE_TONE)).toBeLessThan(0.05);
    expect(middleShare(wav.right, CALLEE_TONE), "right: what the caller hears").toBeGreaterThan(0.8);
    expect(middleShare(wav.right, CALLER_TONE)).toBeLessThan(0.05);
    // One recording for the bridge, though both legs announced it.
    expect((await recordings()).all().filter((d) => d.data.call_id === caller.callId || d.data.call_id === answered.callId)).toHaveLength(1);
    // The scratch file is gone once the attachment is stored.
    expect(await readdir(join(t.store.dir, "recordings.partial"))).toEqual([]);
  });

  it("records nothing when nobody asks", async () => {
    const before = (await recordings()).size;
    const { caller } = await call("1003", "agent2", 300);
    expect(await recordingOf(caller.callId)).toBeUndefined();
    expect((await recordings()).size).toBe(before);
  });

  it("the calling device's outbound setting records its calls, owned by its user", async () => {
    const device = await t.softphone("admin");
    const admin = await t.user("admin");
    await setRecording("devices", device.id, { outbound: { any: { enabled: true } } });
    const { caller } = await call("1003", "agent2", 600);
    await setRecording("devices", device.id, undefined);
    expect((await recordingOf(caller.callId))?.data).toMatchObject({ direction: "outbound", origin: "outbound from device to onnet", owner_id: admin.id });
  });

  it("a device's refusal beats its user's wish; offnet-only settings leave calls between devices alone", async () => {
    const agent = await t.user("agent3");
    const device = await t.softphone("agent3");
    await setRecording("users", agent.id, { enabled: true });
    await setRecording("devices", device.id, { inbound: { enabled: false } });
    const refused = await call("1004", "agent3", 300);
    expect(await recordingOf(refused.caller.callId)).toBeUndefined();

    await setRecording("devices", device.id, undefined);
    await setRecording("users", agent.id, { inbound: { offnet: { enabled: true } } });
    const internal = await call("1004", "agent3", 300);
    expect(await recordingOf(internal.caller.callId)).toBeUndefined();
    await setRecording("users", agent.id, undefined);
  });

  it("a callflow's call_recording records the calls it takes", async () => {
    const agent = await t.user("agent2");
    await t.addCallflow({ numbers: ["2101"], call_recording: { enabled: true }, flow: { module: "user", data: { id: agent.id }, children: {} } });
    const { caller } = await call("2101", "agent2", 600);
    expect((await recordingOf(caller.callId))?.data).toMatchObject({ direction: "inbound", origin: "inbound from onnet to callflow", owner_id: agent.id });
  });

  it("time_limit stops the recording while the call goes on; record_min_sec drops short ones", async () => {
    const agent = await t.user("agent1");
    await setRecording("users", agent.id, { any: { any: { enabled: true, time_limit: 1 } } });
    const limited = await call("1002", "agent1", 2000);
    // About the one second asked for (the clock's frames, not wall time), not the two of the call.
    const doc = await recordingOf(limited.caller.callId);
    expect(Number(doc?.data.duration_ms)).toBeGreaterThanOrEqual(700);
    expect(Number(doc?.data.duration_ms)).toBeLessThanOrEqual(1200);

    await setRecording("users", agent.id, { enabled: true, record_min_sec: 5 });
    const short = await call("1002", "agent1", 300);
    expect(await recordingOf(short.caller.callId)).toBeUndefined();
    await setRecording("users", agent.id, undefined);
  });
});

describe("one customer interaction", () => {
  function channel(call: PhoneCall): Channel {
    const found = t.engine.channels.get(call.callId);
    if (!found) throw new Error(`no live channel ${call.callId}`);
    return found;
  }

  /** The recordings and CDRs written since `since` recordings/CDRs existed. */
  async function newDocs(kind: string, since: ReadonlySet<string>): Promise<StoredDoc[]> {
    return (await t.store.account(t.accountId, kind)).all().filter((d) => !since.has(d.id));
  }

  async function idsOf(kind: string): Promise<Set<string>> {
    return new Set((await t.store.account(t.accountId, kind)).all().map((d) => d.id));
  }

  /** admin (1001) calls agent1 (1002), who answers and talks a moment. */
  async function answeredCall(): Promise<{ party: PhoneCall; transferor: PhoneCall }> {
    const party = await (await t.phone("admin")).dial("1002");
    const transferor = await (await t.phone("agent1")).incoming();
    await transferor.answer();
    await party.reaches("talking");
    await connected(party, transferor);
    await sleep(400);
    return { party, transferor };
  }

  it("an attended transfer: every recording and CDR of the call carries one interaction_id, RECORD_START/RECORD_STOP on the legs, and names its users", async () => {
    const agent1 = await t.user("agent1");
    const agent2 = await t.user("agent2");
    for (const agent of [agent1, agent2]) await setRecording("users", agent.id, { enabled: true });
    const recordingsBefore = await idsOf(RECORDINGS_COLLECTION);
    const cdrsBefore = await idsOf(CDRS_COLLECTION);

    const { party, transferor } = await answeredCall();
    await until(() => t.callEvents(transferor.callId).includes("RECORD_START"), "the recording to be announced on the agent's leg");
    expect(t.callEvents(party.callId)).toContain("RECORD_START");
    await t.engine.commands.transfer(channel(transferor), { target: "1003", type: "attended", leg: "self" });
    const target = await (await t.phone("agent2")).incoming();
    await target.answer();
    await connected(target);
    await sleep(400);
    transferor.hangup();
    await until(() => channel(party).otherLeg === target.callId, "the party to reach the target");
    await sleep(400);
    party.hangup();
    await t.idle();
    await t.engine.recordings.flush();
    for (const agent of [agent1, agent2]) await setRecording("users", agent.id, undefined);

    // The agent's leg said its recording stopped when the bridge it was recorded on went.
    const events = t.callEvents(transferor.callId);
    expect(events.indexOf("RECORD_STOP")).toBeGreaterThan(events.indexOf("RECORD_START"));
    const parts = await newDocs(RECORDINGS_COLLECTION, recordingsBefore);
    expect(parts.length).toBeGreaterThanOrEqual(2);
    const interaction = parts[0]?.data.interaction_id;
    expect(interaction).toMatch(/^\d{11}-[0-9a-f]{8}$/);
    for (const part of parts) expect(part.data.interaction_id).toBe(interaction);
    const users = parts.flatMap((p) => (Array.isArray(p.data.pvt_user_ids) ? p.data.pvt_user_ids : []));
    expect(users).toContain(agent1.id);
    expect(users).toContain(agent2.id);
    // The customer's part with agent2 is one of them, not only agent1's.
    expect(parts.some((p) => p.data.call_id === party.callId && Array.isArray(p.data.pvt_user_ids) && p.data.pvt_user_ids.includes(agent2.id))).toBe(true);
    const cdrCollection = await t.store.account(t.accountId, CDRS_COLLECTION);
    await until(() => cdrCollection.all().filter((d) => !cdrsBefore.has(d.id)).length >= 3, "the CDRs");
    const cdrs = await newDocs(CDRS_COLLECTION, cdrsBefore);
    for (const callId of [party.callId, transferor.callId, target.callId]) {
      expect(cdrs.find((c) => c.data.call_id === callId)?.data.interaction_id, `the CDR of ${callId}`).toBe(interaction);
    }
  });

  it("a blind transfer keeps the moved caller's interaction; a new call starts a new one", async () => {
    const agent2 = await t.user("agent2");
    await setRecording("users", agent2.id, { enabled: true });
    const agent1 = await t.user("agent1");
    await setRecording("users", agent1.id, { enabled: true });
    const before = await idsOf(RECORDINGS_COLLECTION);
    const { party, transferor } = await answeredCall();
    await t.engine.commands.transfer(channel(transferor), { target: "1003", type: "blind", leg: "self" });
    const target = await (await t.phone("agent2")).incoming();
    await target.answer();
    await connected(target);
    await sleep(400);
    party.hangup();
    await t.idle();
    await t.engine.recordings.flush();
    const parts = await newDocs(RECORDINGS_COLLECTION, before);
    expect(parts).toHaveLength(2);
    expect(parts[0]?.data.interaction_id).toBeDefined();
    expect(parts[1]?.data.interaction_id).toBe(parts[0]?.data.interaction_id);

    const next = await answeredCall();
    next.party.hangup();
    await t.idle();
    await t.engine.recordings.flush();
    const again = (await newDocs(RECORDINGS_COLLECTION, before)).find((d) => d.data.call_id === next.party.callId);
    expect(again?.data.interaction_id).toBeDefined();
    expect(again?.data.interaction_id).not.toBe(parts[0]?.data.interaction_id);
    for (const agent of [agent1, agent2]) await setRecording("users", agent.id, undefined);
  });
});

describe("recordings over HTTP", () => {
  let c: CallApi;
  beforeAll(async () => {
    c = await startCallApi();
  });
  afterAll(async () => {
    await c?.close();
  });

  it("a customer's call to an agent who records offnet calls: listed, streamed whole and in part, deleted with its file", async () => {
    const { api, token, base } = c;
    const users = await api.call<{ id: string; username: string }[]>("GET", `${base}/users`, { token });
    const agentId = users.body.data.find((u) => u.username === "agent1")?.id ?? "";
    const patched = await api.call("PATCH", `${base}/users/${agentId}`, { token, data: { call_recording: { inbound: { offnet: { enabled: true } } } } });
    expect(patched.status, patched.text).toBe(200);

    // A simulated caller stands for a customer outside the account: an offnet call.
    const sim = await api.call<{ id: string }>("POST", `${base}/sim/calls`, {
      token,
      data: { to: "1002", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: `tone_stream://${CALLER_TONE}` },
    });
    expect(sim.status, sim.text).toBe(201);
    const callId = sim.body.data.id;
    const agent = await c.phone("agent1").incoming();
    await agent.answer();
    await connected(agent);
    await agent.say(`tone_stream://${CALLEE_TONE}`);
    await sleep(1500);
    agent.hangup();
    await until(() => api.server.calls.channels.size === 0, "the call to end");
    await api.server.calls.recordings.flush();

    const list = await api.call<Record<string, unknown>[]>("GET", `${base}/recordings`, { token, query: { filter_call_id: callId } });
    expect(list.status).toBe(200);
    expect(list.body.data).toHaveLength(1);
    const row = list.body.data[0] ?? {};
    expect(row).toMatchObject({
      call_id: callId,
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      callee_id_number: "1002",
      direction: "inbound",
      origin: "inbound from offnet to user",
      owner_id: agentId,
      media_type: "wav",
      content_type: "audio/wav",
      _read_only: { content_types: ["audio/wav"] },
    });
    const id = String(row.id);
    const doc = await api.call<Record<string, unknown>>("GET", `${base}/recordings/${id}`, { token });
    expect(doc.body.data).toMatchObject({ id, call_id: callId, duration_ms: row.duration_ms });

    const whole = await fetch(`${api.url}${base}/recordings/${id}?accept=audio/wav`, { headers: { "X-Auth-Token": token } });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("content-type")).toBe("audio/wav");
    expect(whole.headers.get("content-disposition")).toBe(`attachment; filename="call_recording_${callId}.wav"`);
    const bytes = Buffer.from(await whole.arrayBuffer());
    const wav = readStereoWav(bytes);
    expect(wav.left.length).toBe((Number(row.duration_ms) * 8000) / 1000);
    expect(middleShare(wav.left, CALLER_TONE), "left: the customer").toBeGreaterThan(0.8);
    expect(middleShare(wav.right, CALLEE_TONE), "right: the agent the customer hears").toBeGreaterThan(0.8);

    const part = await fetch(`${api.url}${base}/recordings/${id}`, { headers: { "X-Auth-Token": token, Accept: "audio/wav", Range: "bytes=0-43" } });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 0-43/${bytes.length}`);
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(0, 44));

    const file = join(api.dataDir, "accounts", c.accountId, "recordings.attachments", id, RECORDING_ATTACHMENT);
    expect(existsSync(file)).toBe(true);
    const deleted = await api.call<Record<string, unknown>>("DELETE", `${base}/recordings/${id}`, { token });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ id, call_id: callId });
    expect(existsSync(file)).toBe(false);
    expect((await api.call("GET", `${base}/recordings/${id}`, { token })).status).toBe(404);
  });
});
