// The channels and CDR endpoints over real HTTP on a started server whose call engine is driven by
// fake signalling: the lists and details while a call is up, the commands acting on the real call
// (hangup, blind transfer), the documented errors, and the CDRs listed newest first.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine } from "../../server/media/index.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";
import { FakeSignalling, until, type FakePhone, type PhoneCall } from "../helpers/fake-signalling.js";

interface Row {
  uuid: string;
  [key: string]: unknown;
}

let api: TestApi;
let token: string;
let base: string;
let media: MediaEngine;
let signalling: FakeSignalling;
const devices = new Map<string, string>();
const users = new Map<string, string>();

beforeAll(async () => {
  media = new MediaEngine();
  signalling = new FakeSignalling(media);
  api = await startApi({ config: { callSignalling: signalling } });
  const login = await api.login("admin");
  token = login.token;
  base = `/v2/accounts/${login.accountId}`;
  const deviceList = await api.call<{ id: string; username: string }[]>("GET", `${base}/devices`, { token });
  for (const d of deviceList.body.data) devices.set(d.username, d.id);
  const userList = await api.call<{ id: string; username: string }[]>("GET", `${base}/users`, { token });
  for (const u of userList.body.data) users.set(u.username, u.id);
});

afterAll(async () => {
  await api?.close();
  await media?.close();
});

function phone(username: string): FakePhone {
  const deviceId = devices.get(username);
  if (!deviceId) throw new Error(`no device for ${username}`);
  return signalling.phone({ accountId: base.split("/")[3] ?? "", deviceId }, username);
}

async function bridgedCall(): Promise<{ caller: PhoneCall; agent: PhoneCall }> {
  const agentPhone = phone("agent1");
  const caller = await phone("admin").dial("1002");
  const agent = await agentPhone.incoming();
  agent.ring();
  await agent.answer();
  await caller.reaches("talking");
  await until(() => caller.leg.state === "connected" && agent.leg.state === "connected", "media");
  return { caller, agent };
}

async function noChannels(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const res = await api.call<Row[]>("GET", `${base}/channels`, { token });
    if (res.body.data.length === 0) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error("channels still up");
}

describe("channel lists and details", () => {
  it("lists the legs of a live call for the account, the user and the device, with the hosted fields", async () => {
    const { caller, agent } = await bridgedCall();
    const all = await api.call<Row[]>("GET", `${base}/channels`, { token });
    expect(all.status).toBe(200);
    expect(all.body.data.map((r) => r.uuid).sort()).toEqual([caller.callId, agent.callId].sort());
    const inbound = all.body.data.find((r) => r.uuid === caller.callId);
    expect(inbound).toEqual({
      uuid: caller.callId,
      answered: true,
      authorizing_id: devices.get("admin"),
      authorizing_type: "device",
      destination: "1002",
      direction: "inbound",
      other_leg: agent.callId,
      owner_id: users.get("admin"),
      presence_id: "1001@demo.switchboard.local",
      timestamp: expect.any(Number),
      username: "admin",
    });
    expect(all.body.data.find((r) => r.uuid === agent.callId)).toMatchObject({ direction: "outbound", destination: "agent1", other_leg: caller.callId });

    const ofUser = await api.call<Row[]>("GET", `${base}/users/${users.get("agent1")}/channels`, { token });
    expect(ofUser.body.data.map((r) => r.uuid)).toEqual([agent.callId]);
    const ofDevice = await api.call<Row[]>("GET", `${base}/devices/${devices.get("admin")}/channels`, { token });
    expect(ofDevice.body.data.map((r) => r.uuid)).toEqual([caller.callId]);
    const ofNobody = await api.call<Row[]>("GET", `${base}/users/${users.get("agent3")}/channels`, { token });
    expect(ofNobody.body.data).toEqual([]);
    const filtered = await api.call<Row[]>("GET", `${base}/channels`, { token, query: { filter_direction: "outbound" } });
    expect(filtered.body.data.map((r) => r.uuid)).toEqual([agent.callId]);
    const paged = await api.call<Row[]>("GET", `${base}/channels`, { token, query: { page_size: "1" } });
    expect(paged.body.data).toHaveLength(1);
    expect(paged.body.next_start_key).toEqual(expect.any(String));

    const detail = await api.call<Record<string, unknown>>("GET", `${base}/channels/${agent.callId}`, { token });
    expect(detail.status).toBe(200);
    expect(detail.body.data).toMatchObject({
      uuid: agent.callId,
      caller_id_name: "Ada Admin",
      caller_id_number: "1001",
      callee_id_name: "Alex Agent",
      callee_id_number: "1002",
      elapsed_s: expect.any(Number),
      is_onhold: false,
    });
    await agent.hold();
    const held = await api.call<Record<string, unknown>>("GET", `${base}/channels/${agent.callId}`, { token });
    expect(held.body.data.is_onhold).toBe(true);

    caller.hangup();
    await noChannels();
  });

  it("answers 404 for an unknown channel, user or device, and for another account's call", async () => {
    const missing = await api.call("GET", `${base}/channels/nope`, { token });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: "nope" } });
    expect((await api.call("GET", `${base}/users/${"0".repeat(32)}/channels`, { token })).status).toBe(404);
    expect((await api.call("GET", `${base}/devices/${"0".repeat(32)}/channels`, { token })).status).toBe(404);

    const { caller } = await bridgedCall();
    const other = await createAccount(api, "elsewhere");
    const theirs = await api.call("GET", `/v2/accounts/${other.accountId}/channels/${caller.callId}`, { token: other.token });
    expect(theirs.status).toBe(404);
    const list = await api.call<Row[]>("GET", `/v2/accounts/${other.accountId}/channels`, { token: other.token });
    expect(list.body.data).toEqual([]);
    caller.hangup();
    await noChannels();
  });
});

describe("channel commands", () => {
  it("hangup answers 202 and ends the call on both phones", async () => {
    const { caller, agent } = await bridgedCall();
    const res = await api.call("POST", `${base}/channels/${caller.callId}`, { token, data: { action: "hangup" } });
    expect(res.status).toBe(202);
    expect(res.body.data).toBe("hangup initiated");
    await caller.reaches("ended");
    await agent.reaches("ended");
    expect(caller.endedBy).toBe("remote-bye");
    expect(agent.endedBy).toBe("remote-bye");
    await noChannels();
  });

  it("takes the action at the top of the envelope or in the query string, as Kazoo reads it", async () => {
    const first = await bridgedCall();
    const top = await api.call("POST", `${base}/channels/${first.caller.callId}`, {
      token,
      body: JSON.stringify({ action: "hangup", data: {} }),
      headers: { "Content-Type": "application/json" },
    });
    expect(top.status, top.text).toBe(202);
    await first.caller.reaches("ended");
    await first.agent.reaches("ended");
    await noChannels();
    const second = await bridgedCall();
    const query = await api.call("POST", `${base}/channels/${second.agent.callId}`, { token, data: {}, query: { action: "hangup" } });
    expect(query.status, query.text).toBe(202);
    await second.caller.reaches("ended");
    await second.agent.reaches("ended");
    await noChannels();
  });

  it("a blind transfer (PUT accepted too) sends the party to the target and hangs up the channel", async () => {
    const { caller, agent } = await bridgedCall();
    const targetPhone = phone("agent2");
    const res = await api.call("PUT", `${base}/channels/${agent.callId}`, { token, data: { action: "transfer", target: "1003" } });
    expect(res.status).toBe(202);
    expect(res.body.data).toBe("transfer initiated");
    await agent.reaches("ended");
    const second = await targetPhone.incoming();
    await second.answer();
    await until(() => second.leg.state === "connected", "media");
    await caller.say("tone_stream://440");
    expect((await second.hears([440]))[440]).toBeGreaterThan(0.9);
    const detail = await api.call<Record<string, unknown>>("GET", `${base}/channels/${caller.callId}`, { token });
    expect(detail.body.data).toMatchObject({ other_leg: second.callId, callee_id_number: "1003" });
    second.hangup();
    await caller.reaches("ended");
    await noChannels();
  });

  it("lets a user who is not in the call pick it up to themselves (intercept), and refuses every other command and target", async () => {
    const ringingPhone = phone("agent2");
    const pickupPhone = phone("agent3");
    const caller = await phone("admin").dial("1003");
    const offered = await ringingPhone.incoming();
    offered.ring();
    await caller.reaches("ringing");
    const agent3 = await api.login("agent3");
    const url = `${base}/channels/${caller.callId}`;
    const asAgent3 = (data: Record<string, unknown>) => api.call("POST", url, { token: agent3.token, data });

    // Not their call: no hangup, no transfer, no intercept to someone else's phone or user.
    for (const data of [
      { action: "hangup" },
      { action: "transfer", target: "1004" },
      { action: "intercept", target_type: "device", target_id: devices.get("agent2") },
      { action: "intercept", target_type: "user", target_id: users.get("admin") },
    ]) {
      const refused = await asAgent3(data);
      expect(refused.status, `${JSON.stringify(data)}: ${refused.text}`).toBe(403);
    }
    expect(caller.leg.state).not.toBe("ended");

    // To their own device: the call is theirs, the ringing phone stops.
    const picked = await asAgent3({ action: "intercept", target_type: "device", target_id: devices.get("agent3") });
    expect(picked.status, picked.text).toBe(202);
    const taken = await pickupPhone.incoming();
    await taken.answer();
    await offered.reaches("ended");
    await until(() => taken.leg.state === "connected", "media");
    taken.hangup();
    await caller.reaches("ended");
    await noChannels();
  });

  it("answers the documented errors", async () => {
    const targetPhone = phone("agent2");
    const caller = await phone("admin").dial("1003");
    const offered = await targetPhone.incoming();
    offered.ring();
    await caller.reaches("ringing");
    const url = `${base}/channels/${caller.callId}`;

    const unknown = await api.call("POST", url, { token, data: { action: "juggle" } });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({ error: "400", message: "invalid data" });
    const noAction = await api.call("POST", url, { token, data: {} });
    expect(noAction.body).toMatchObject({ error: "400", message: "validation error", data: { action: { required: expect.any(Object) } } });
    const noTarget = await api.call("POST", url, { token, data: { action: "transfer" } });
    expect(noTarget.body).toMatchObject({ error: "400", message: "validation error", data: { target: { required: expect.any(Object) } } });
    const badType = await api.call("POST", url, { token, data: { action: "transfer", target: "1002", "transfer-type": "psychic" } });
    expect(badType.body).toMatchObject({ message: "validation error", data: { "transfer-type": { enum: expect.any(Object) } } });
    const notBridged = await api.call<unknown>("POST", url, { token, data: { action: "transfer", target: "1002" } });
    expect(notBridged.status).toBe(400);
    expect(notBridged.body).toMatchObject({ message: "invalid data", data: { action: { transfer: { message: expect.stringMatching(/not bridged/) } } } });
    const noCallflow = await api.call("POST", url, { token, data: { action: "callflow", id: "0".repeat(32) } });
    expect(noCallflow.body).toMatchObject({ message: "invalid data", data: { id: { callflow: expect.any(Object) } } });
    const noIntercept = await api.call("POST", url, { token, data: { action: "intercept", target_type: "device" } });
    expect(noIntercept.body).toMatchObject({ message: "validation error", data: { target_id: { required: expect.any(Object) } } });
    const missing = await api.call("POST", `${base}/channels/nope`, { token, data: { action: "hangup" } });
    expect(missing.status).toBe(404);

    // break is real: it leaves the ringing step, and with no next step the caller is refused.
    const broke = await api.call("POST", url, { token, data: { action: "break" } });
    expect(broke.status).toBe(202);
    await caller.reaches("ended");
    await offered.reaches("ended");
    await noChannels();
  });
});

describe("CDRs", () => {
  it("lists every finished leg newest first, pages, filters and reads one", async () => {
    const first = await bridgedCall();
    first.agent.hangup();
    await first.caller.reaches("ended");
    const second = await bridgedCall();
    second.caller.hangup();
    await second.agent.reaches("ended");
    await noChannels();
    let list = await api.call<Row[]>("GET", `${base}/cdrs`, { token, query: { paginate: "false" } });
    for (let i = 0; i < 100 && !list.body.data.some((c) => c.call_id === second.agent.callId); i++) {
      await new Promise((r) => setTimeout(r, 25));
      list = await api.call<Row[]>("GET", `${base}/cdrs`, { token, query: { paginate: "false" } });
    }
    const order = list.body.data.map((c) => c.call_id);
    const at = (id: string) => order.indexOf(id);
    expect(at(second.agent.callId)).toBeLessThan(at(second.caller.callId));
    expect(at(second.caller.callId)).toBeLessThan(at(first.agent.callId));
    expect(at(first.agent.callId)).toBeLessThan(at(first.caller.callId));
    const cdr = list.body.data.find((c) => c.call_id === second.caller.callId);
    expect(cdr).toMatchObject({ direction: "inbound", other_leg_call_id: second.agent.callId, hangup_cause: "NORMAL_CLEARING", hangup_code: "sip:200" });
    expect(String(cdr?.id)).toMatch(/^\d{6}-[0-9a-f]{32}$/);
    expect(cdr).not.toHaveProperty("pvt_started_ms");

    const page = await api.call<Row[]>("GET", `${base}/cdrs`, { token, query: { page_size: "1" } });
    expect(page.body.data).toHaveLength(1);
    expect(page.body.data[0]?.call_id).toBe(order[0]);
    const next = await api.call<Row[]>("GET", `${base}/cdrs`, { token, query: { page_size: "1", start_key: page.body.next_start_key ?? "" } });
    expect(next.body.data[0]?.call_id).toBe(order[1]);
    const outbound = await api.call<Row[]>("GET", `${base}/cdrs`, { token, query: { filter_direction: "outbound", paginate: "false" } });
    expect(outbound.body.data.length).toBeGreaterThan(0);
    expect(outbound.body.data.every((c) => c.direction === "outbound")).toBe(true);
    const ofAgent = await api.call<Row[]>("GET", `${base}/users/${users.get("agent1")}/cdrs`, { token, query: { paginate: "false" } });
    expect(ofAgent.body.data.length).toBeGreaterThan(0);
    expect(ofAgent.body.data.every((c) => c.owner_id === users.get("agent1"))).toBe(true);

    const one = await api.call<Row>("GET", `${base}/cdrs/${String(cdr?.id)}`, { token });
    expect(one.status).toBe(200);
    expect(one.body.data.call_id).toBe(second.caller.callId);
    expect((await api.call("GET", `${base}/cdrs/202601-${"0".repeat(32)}`, { token })).status).toBe(404);
  });
});

describe("webhooks fired by a call", () => {
  it("channel_create, _answer, _bridge and _destroy for each leg, and the missed_call notification", async () => {
    const received: { path: string; body: Record<string, unknown> }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        received.push({ path: req.url ?? "", body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    try {
      for (const hook of ["channel_create", "channel_answer", "channel_bridge", "channel_destroy"]) {
        const res = await api.call("PUT", `${base}/webhooks`, { token, data: { name: hook, hook, uri: `${url}/${hook}`, format: "json" } });
        expect(res.status).toBe(201);
      }
      const missed = await api.call("PUT", `${base}/webhooks`, {
        token,
        data: { name: "missed", hook: "notifications", uri: `${url}/missed`, format: "json", custom_data: { type: "missed_call" } },
      });
      expect(missed.status).toBe(201);

      const { caller, agent } = await bridgedCall();
      agent.hangup();
      await caller.reaches("ended");
      const agentPhone = phone("agent2");
      const unanswered = await phone("admin").dial("1003");
      (await agentPhone.incoming()).ring();
      await unanswered.reaches("ringing");
      unanswered.cancel();
      await noChannels();

      const at = (path: string) => received.filter((r) => r.path === path).map((r) => r.body);
      await until(() => at("/channel_destroy").length >= 4 && at("/missed").length >= 1, "the webhooks", 10_000);
      expect(at("/channel_create").map((b) => b.call_id)).toEqual(expect.arrayContaining([caller.callId, agent.callId]));
      expect(at("/channel_answer").map((b) => b.call_id).sort()).toEqual([caller.callId, agent.callId].sort());
      expect(at("/channel_bridge").map((b) => b.call_id).sort()).toEqual([caller.callId, agent.callId].sort());
      const destroy = at("/channel_destroy").find((b) => b.call_id === caller.callId);
      expect(destroy).toMatchObject({
        hook_event: "channel_destroy",
        call_direction: "inbound",
        other_leg_call_id: agent.callId,
        caller_id_number: "1001",
        callee_id_number: "1002",
        hangup_cause: "NORMAL_CLEARING",
        hangup_code: "sip:200",
        duration_seconds: expect.any(Number),
        billing_seconds: expect.any(Number),
        ringing_seconds: expect.any(Number),
      });
      expect(at("/missed")).toEqual([expect.objectContaining({ hook_event: "notifications", call_id: unanswered.callId, callee_id_number: "1003" })]);
    } finally {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
