// NOTIFY check-sync: POST /devices/{id}/sync reaches a registered phone over its own socket, the
// phone's 200 is taken quietly, and an unregistered device gets nothing (still 202).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { hex, newDevice, SipPhone, SipSocket, type SipMessage, type TestDevice } from "../helpers/sip-client.js";

const REALM = "demo.switchboard.local";

let api: TestApi;
let token: string;
let accountId: string;
const sockets: SipSocket[] = [];

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await api.close();
});

const device = () => newDevice(api, { token, accountId });

async function registeredPhone(d: TestDevice): Promise<SipPhone> {
  const socket = await SipSocket.connect(api.url);
  sockets.push(socket);
  const phone = new SipPhone(socket, { ...d, realm: REALM });
  expect((await phone.register({ expires: 300 })).status).toBe(200);
  return phone;
}

/** The 200 a phone sends back: the NOTIFY's Via, From, To (+tag), Call-ID and CSeq. */
function ok(notify: SipMessage): string {
  return [
    "SIP/2.0 200 OK",
    ...(notify.headers.get("via") ?? []).map((v) => `Via: ${v}`),
    `From: ${notify.header("from") ?? ""}`,
    `To: ${notify.header("to") ?? ""};tag=${hex(4)}`,
    `Call-ID: ${notify.header("call-id") ?? ""}`,
    `CSeq: ${notify.header("cseq") ?? ""}`,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
}

const sync = (id: string, t = token) => api.call<string>("POST", `/v2/accounts/${accountId}/devices/${id}/sync`, { token: t });

describe("NOTIFY check-sync", () => {
  it("sends NOTIFY Event: check-sync to the registered contact over its socket after POST /devices/{id}/sync", async () => {
    const d = await device();
    const phone = await registeredPhone(d);
    const res = await sync(d.id);
    expect(res.status).toBe(202);
    expect(res.body.data).toBe("sync request sent");

    const notify = await phone.socket.next();
    expect(notify.method).toBe("NOTIFY");
    // The Request-URI is the registered contact, not the AOR (sip.js answers 404 otherwise).
    expect(notify.uri).toBe(phone.contact);
    expect(notify.header("event")).toBe("check-sync");
    expect(notify.header("subscription-state")).toBe("terminated");
    expect(notify.header("via")).toMatch(/^SIP\/2\.0\/WS \S+;branch=z9hG4bK\w+$/);
    expect(notify.header("from")).toMatch(/;tag=\w+$/);
    expect(notify.header("to")).toBe(`<sip:${d.username}@${REALM}>`);
    expect(notify.header("cseq")).toMatch(/^\d+ NOTIFY$/);
    expect(notify.header("call-id")).toBeTruthy();
    expect(notify.header("content-length")).toBe("0");

    // The phone's answer matches the server's transaction and is taken without a reply.
    phone.socket.send(ok(notify));
    await phone.socket.expectSilence();
    // The flow is still fine: the phone can refresh its registration.
    expect((await phone.register({ expires: 300 })).status).toBe(200);
  });

  it("sends one NOTIFY per binding, each with its own branch and Call-ID, over the socket each registered on", async () => {
    const d = await device();
    const first = await registeredPhone(d);
    const second = await registeredPhone(d);
    expect((await sync(d.id)).status).toBe(202);
    const [a, b] = await Promise.all([first.socket.next(), second.socket.next()]);
    expect(a.uri).toBe(first.contact);
    expect(b.uri).toBe(second.contact);
    expect(a.header("via")).not.toBe(b.header("via"));
    expect(a.header("call-id")).not.toBe(b.header("call-id"));
  });

  it("sends check-sync to each registered device a user owns when the user is written with sync: true (users.md), storing no sync", async () => {
    const created = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/users`, { token, data: { first_name: "Sync", last_name: "Owner" } });
    expect(created.status).toBe(201);
    const userId = created.body.data.id;
    const owned = await registeredPhone(await newDevice(api, { token, accountId }, { owner_id: userId }));
    const other = await registeredPhone(await device());
    const res = await api.call<Record<string, unknown>>("PATCH", `/v2/accounts/${accountId}/users/${userId}`, { token, data: { sync: true } });
    expect(res.status).toBe(200);
    expect(res.body.data).not.toHaveProperty("sync");
    const notify = await owned.socket.next();
    expect(notify.method).toBe("NOTIFY");
    expect(notify.header("event")).toBe("check-sync");
    await other.socket.expectSilence();
    // A write without sync sends nothing.
    expect((await api.call("PATCH", `/v2/accounts/${accountId}/users/${userId}`, { token, data: { last_name: "Owner2" } })).status).toBe(200);
    await owned.socket.expectSilence();
  });

  it("answers 202 and sends nothing to a device that is not registered", async () => {
    const registered = await device();
    const phone = await registeredPhone(registered);
    const idle = await device();
    const res = await sync(idle.id);
    expect(res.status).toBe(202);
    expect(res.body.data).toBe("sync request sent");
    await phone.socket.expectSilence();
  });

  it("sends nothing once the device has unregistered", async () => {
    const d = await device();
    const phone = await registeredPhone(d);
    expect((await phone.unregister()).status).toBe(200);
    expect((await sync(d.id)).status).toBe(202);
    await phone.socket.expectSilence();
  });

  it("answers 404 bad_identifier for an unknown device, and 403 to a non-admin", async () => {
    const missing = await sync("0".repeat(32));
    expect(missing.status).toBe(404);
    expect(missing.body.message).toBe("bad_identifier");
    const d = await device();
    const agent = await api.login("agent1");
    expect((await sync(d.id, agent.token)).status).toBe(403);
  });

  it("drops a response that answers no request of the server", async () => {
    const d = await device();
    const phone = await registeredPhone(d);
    const stray = [
      "SIP/2.0 200 OK",
      `Via: SIP/2.0/WS x.invalid;branch=z9hG4bK${hex()}`,
      `From: <sip:${d.username}@${REALM}>;tag=${hex(4)}`,
      `To: <sip:${d.username}@${REALM}>;tag=${hex(4)}`,
      `Call-ID: ${hex()}`,
      "CSeq: 1 NOTIFY",
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    phone.socket.send(stray);
    await phone.socket.expectSilence();
    expect((await phone.register({ expires: 300 })).status).toBe(200);
  });

  it("sends check-sync on a device update with data.sync: true (POST or PATCH), and nothing without it", async () => {
    const d = await device();
    const phone = await registeredPhone(d);
    const path = `/v2/accounts/${accountId}/devices/${d.id}`;
    const current = await api.call<Record<string, unknown>>("GET", path, { token });
    const { id: _id, ...doc } = current.body.data;
    expect((await api.call("POST", path, { token, data: { ...doc, sync: true } })).status).toBe(200);
    const first = await phone.socket.next();
    expect(first.method).toBe("NOTIFY");
    expect(first.header("event")).toBe("check-sync");
    phone.socket.send(ok(first));
    expect((await api.call("PATCH", path, { token, data: { sync: true } })).status).toBe(200);
    const second = await phone.socket.next();
    expect(second.header("event")).toBe("check-sync");
    phone.socket.send(ok(second));
    expect((await api.call("PATCH", path, { token, data: { name: "renamed" } })).status).toBe(200);
    await phone.socket.expectSilence();
  });
});
