// SIP over WebSocket, registrations: digest challenge and answer, failures, expiry on the clock,
// refresh, un-REGISTER, socket close, /devices/status over HTTP, and junk that must not hurt.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, TestClock, type TestApi } from "../helpers/api.js";
import { authorization, contactExpiries, digestParams, hex, newDevice, SipPhone, SipSocket, type PhoneOptions } from "../helpers/sip-client.js";

const REALM = "demo.switchboard.local";

let api: TestApi;
let clock: TestClock;
let token: string;
let accountId: string;
const sockets: SipSocket[] = [];

beforeAll(async () => {
  clock = new TestClock();
  api = await startApi({ clock });
  ({ token, accountId } = await api.login("admin"));
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await api.close();
});

async function socket(): Promise<SipSocket> {
  const s = await SipSocket.connect(api.url);
  sockets.push(s);
  return s;
}

/** A fresh device of the demo account, so each test starts unregistered. */
async function device(fields: Record<string, unknown> = {}, sip: Record<string, unknown> = {}): Promise<PhoneOptions & { id: string }> {
  return { ...(await newDevice(api, { token, accountId }, fields, sip)), realm: REALM };
}

async function phone(options?: PhoneOptions & { id: string }): Promise<SipPhone & { id: string }> {
  const d = options ?? (await device());
  return Object.assign(new SipPhone(await socket(), d), { id: d.id });
}

async function registered(): Promise<string[]> {
  const res = await api.call<{ device_id: string; registered: boolean }[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token });
  expect(res.status).toBe(200);
  for (const row of res.body.data) expect(row.registered).toBe(true);
  return res.body.data.map((r) => r.device_id);
}

async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`never happened: ${what}`);
}

describe("REGISTER with digest authentication", () => {
  it("challenges a REGISTER without credentials with 401 and a digest for the account realm", async () => {
    const p = await phone();
    const text = p.registerText({ expires: 600 });
    p.socket.send(text);
    const res = await p.socket.next();
    expect(res.status).toBe(401);
    const params = digestParams(res.header("www-authenticate") ?? "");
    expect(params).toMatchObject({ realm: REALM, qop: "auth", algorithm: "MD5" });
    expect(params.nonce).toMatch(/^[0-9a-f]{32}$/);
    // The response names the request: Via, From, Call-ID and CSeq as sent, To with a tag added.
    const sent = text.split("\r\n");
    const line = (prefix: string) => sent.find((l) => l.startsWith(prefix))?.slice(prefix.length);
    expect(res.header("via")).toBe(line("Via: "));
    expect(res.header("from")).toBe(line("From: "));
    expect(res.header("call-id")).toBe(p.callId);
    expect(res.header("cseq")).toBe("1 REGISTER");
    expect(res.header("to")).toMatch(new RegExp(`^<sip:${p.options.username}@${REALM}>;tag=\\w+$`));
    expect(await registered()).not.toContain(p.id);
  });

  it("accepts the right digest with 200, listing the contact with its expiry, and lists the device as registered", async () => {
    const p = await phone();
    const res = await p.register({ expires: 600 });
    expect(res.status).toBe(200);
    expect(res.header("cseq")).toBe("2 REGISTER");
    expect(contactExpiries(res)).toEqual(new Map([[p.contact, 600]]));
    expect(res.header("contact")).toContain("reg-id=1");
    expect(await registered()).toContain(p.id);
  });

  it("accepts a digest without qop (RFC 2069 style)", async () => {
    const p = await phone();
    const challenge = (await p.send({ expires: 300 })).header("www-authenticate") ?? "";
    const auth = authorization({ ...p.options, method: "REGISTER", uri: p.requestUri, challenge, noQop: true });
    expect((await p.send({ expires: 300, authorization: auth })).status).toBe(200);
  });

  it("answers 403 to a wrong password and to an unknown username alike, and registers nothing", async () => {
    const p = await phone();
    expect((await p.register({ expires: 300 }, "not-the-password")).status).toBe(403);
    const stranger = await phone({ id: "none", username: "nobody_here", password: "x", realm: REALM });
    expect((await stranger.register({ expires: 300 })).status).toBe(403);
    expect(await registered()).not.toContain(p.id);
  });

  it("answers 403 when the To user is another device than the one authenticated", async () => {
    const a = await device();
    const b = await device();
    const p = await phone(a);
    const challenge = (await p.send({ expires: 300 })).header("www-authenticate") ?? "";
    // Authenticates as b while asking to register a's address-of-record.
    const auth = authorization({ username: b.username, password: b.password, method: "REGISTER", uri: p.requestUri, challenge });
    expect((await p.send({ expires: 300, authorization: auth })).status).toBe(403);
  });

  it("answers 403 to a disabled device even with the right password", async () => {
    const d = await device({ enabled: false });
    expect((await (await phone(d)).register({ expires: 300 })).status).toBe(403);
    expect(await registered()).not.toContain(d.id);
  });

  it("answers 404 to a realm no account has, without a challenge", async () => {
    const d = await device();
    const p = await phone({ ...d, realm: "nowhere.example", registrar: "nowhere.example" });
    const res = await p.send({ expires: 300 });
    expect(res.status).toBe(404);
    expect(res.header("www-authenticate")).toBeUndefined();
  });

  it("finds the account by realm whatever its case, and by To when the Request-URI is the server's address", async () => {
    const d = await device();
    expect((await (await phone({ ...d, registrar: REALM.toUpperCase() })).register({ expires: 300 })).status).toBe(200);
    const e = await device();
    expect((await (await phone({ ...e, registrar: "127.0.0.1" })).register({ expires: 300 })).status).toBe(200);
    expect(await registered()).toEqual(expect.arrayContaining([d.id, e.id]));
  });

  it("answers a correct digest on an expired nonce with a new challenge marked stale=true", async () => {
    const p = await phone();
    const challenge = (await p.send({ expires: 300 })).header("www-authenticate") ?? "";
    clock.advance(6 * 60_000);
    const auth = authorization({ ...p.options, method: "REGISTER", uri: p.requestUri, challenge });
    const res = await p.send({ expires: 300, authorization: auth });
    expect(res.status).toBe(401);
    const fresh = digestParams(res.header("www-authenticate") ?? "");
    expect(fresh.stale).toBe("true");
    expect(fresh.nonce).not.toBe(digestParams(challenge).nonce);
    expect(await registered()).not.toContain(p.id);
  });

  it("answers a replayed nonce count with a stale challenge", async () => {
    const p = await phone();
    const challenge = (await p.send({ expires: 300 })).header("www-authenticate") ?? "";
    const auth = authorization({ ...p.options, method: "REGISTER", uri: p.requestUri, challenge });
    expect((await p.send({ expires: 300, authorization: auth })).status).toBe(200);
    const replay = await p.send({ expires: 300, authorization: auth });
    expect(replay.status).toBe(401);
    expect(digestParams(replay.header("www-authenticate") ?? "").stale).toBe("true");
  });

  it("answers a malformed Authorization with 400", async () => {
    const p = await phone();
    const res = await p.send({ expires: 300, authorization: 'Digest username="x", realm="unterminated' });
    expect(res.status).toBe(400);
  });
});

describe("registration expiry and refresh", () => {
  it("answers 423 with Min-Expires below 60 seconds, and caps long requests at 3600", async () => {
    const p = await phone();
    const brief = await p.register({ expires: 30 });
    expect(brief.status).toBe(423);
    expect(brief.header("min-expires")).toBe("60");
    const long = await p.register({ expires: 86_400 });
    expect(long.status).toBe(200);
    expect(contactExpiries(long).get(p.contact)).toBe(3600);
  });

  it("prefers the contact's expires parameter to the Expires header, and uses the device's setting when neither is given", async () => {
    const p = await phone(await device({}, { registration_expiration: 900 }));
    const byParam = await p.register({ expires: 600, contactExpires: 120 });
    expect(contactExpiries(byParam).get(p.contact)).toBe(120);
    const q = await phone(await device({}, { registration_expiration: 900 }));
    expect(contactExpiries(await q.register()).get(q.contact)).toBe(900);
    const r = await phone();
    expect(contactExpiries(await r.register()).get(r.contact)).toBe(300);
  });

  it("ends a registration when its time is up on the server's clock", async () => {
    const p = await phone();
    expect((await p.register({ expires: 60 })).status).toBe(200);
    clock.advance(59_000);
    expect(await registered()).toContain(p.id);
    clock.advance(2_000);
    expect(await registered()).not.toContain(p.id);
  });

  it("extends a registration on re-REGISTER with the same contact, keeping one binding", async () => {
    const p = await phone();
    expect((await p.register({ expires: 120 })).status).toBe(200);
    clock.advance(100_000);
    const again = await p.register({ expires: 120 });
    expect(again.status).toBe(200);
    expect(contactExpiries(again)).toEqual(new Map([[p.contact, 120]]));
    clock.advance(100_000);
    expect(await registered()).toContain(p.id);
    clock.advance(21_000);
    expect(await registered()).not.toContain(p.id);
  });

  it("refuses a REGISTER older than the one that made the binding (same Call-ID, lower CSeq) with 500", async () => {
    const p = await phone();
    expect((await p.register({ expires: 300 })).status).toBe(200);
    const challenge = (await p.send({ expires: 0, cseq: 1 })).header("www-authenticate") ?? "";
    const auth = authorization({ ...p.options, method: "REGISTER", uri: p.requestUri, challenge });
    expect((await p.send({ expires: 0, cseq: 1, authorization: auth })).status).toBe(500);
    expect(await registered()).toContain(p.id);
  });

  it("answers a REGISTER without Contact with the current bindings and changes nothing", async () => {
    const p = await phone();
    await p.register({ expires: 300 });
    const query = await p.register({ noContact: true });
    expect(query.status).toBe(200);
    expect([...contactExpiries(query).keys()]).toEqual([p.contact]);
  });
});

describe("un-REGISTER, several contacts and socket close", () => {
  it("removes a binding on Expires: 0, answering 200 without it", async () => {
    const p = await phone();
    await p.register({ expires: 300 });
    const res = await p.unregister();
    expect(res.status).toBe(200);
    expect(res.header("contact")).toBeUndefined();
    expect(await registered()).not.toContain(p.id);
  });

  it("keeps one binding per contact of a device and removes them all with Contact: *", async () => {
    const d = await device();
    const first = await phone(d);
    const second = await phone(d);
    await first.register({ expires: 300 });
    const both = await second.register({ expires: 300 });
    expect([...contactExpiries(both).keys()].sort()).toEqual([first.contact, second.contact].sort());
    const star = await first.register({ star: true, expires: 0 });
    expect(star.status).toBe(200);
    expect(star.header("contact")).toBeUndefined();
    expect(await registered()).not.toContain(d.id);
  });

  it("answers 400 to Contact: * without Expires: 0", async () => {
    const p = await phone();
    expect((await p.register({ star: true, expires: 300 })).status).toBe(400);
  });

  it("registers several devices of one user, each listed in /devices/status", async () => {
    const users = await api.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${accountId}/users`, { token });
    const owner = users.body.data.find((u) => u.username === "agent2")?.id;
    const desk = await device({ owner_id: owner });
    const soft = await device({ owner_id: owner });
    expect((await (await phone(desk)).register({ expires: 300 })).status).toBe(200);
    expect((await (await phone(soft)).register({ expires: 300 })).status).toBe(200);
    expect(await registered()).toEqual(expect.arrayContaining([desk.id, soft.id]));
  });

  it("ends the registrations made over a socket when it closes, and only those", async () => {
    const d = await device();
    const staying = await phone(d);
    const leaving = await phone(d);
    const other = await phone();
    await staying.register({ expires: 300 });
    await leaving.register({ expires: 300 });
    await other.register({ expires: 300 });
    await leaving.socket.close();
    await eventually(async () => {
      const res = await staying.register({ noContact: true });
      return res.status === 200 && [...contactExpiries(res).keys()].join() === staying.contact;
    }, "the closed socket's binding gone");
    expect(await registered()).toEqual(expect.arrayContaining([d.id, other.id]));
    await other.socket.close();
    await eventually(async () => !(await registered()).includes(other.id), "the device of the closed socket unregistered");
  });

  it("moves a binding to the new socket when the same contact registers again after a reconnect", async () => {
    const d = await device();
    const before = await phone(d);
    await before.register({ expires: 300 });
    const after = Object.assign(new SipPhone(await socket(), { ...d, contact: before.contact }), { id: d.id });
    expect((await after.register({ expires: 300 })).status).toBe(200);
    await before.socket.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(await registered()).toContain(d.id);
  });

  it("answers DELETE /devices/status like GET, and [] for an account with nothing registered", async () => {
    const get = await api.call<unknown[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token });
    const del = await api.call<unknown[]>("DELETE", `/v2/accounts/${accountId}/devices/status`, { token });
    expect(del.status).toBe(200);
    expect(del.body.data).toEqual(get.body.data);
    const fresh = await startApi();
    try {
      const login = await fresh.login("agent1");
      const res = await fresh.call<unknown[]>("GET", `/v2/accounts/${login.accountId}/devices/status`, { token: login.token });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe("other methods and bad input", () => {
  const request = (method: string, extra: string[] = []) =>
    [
      `${method} sip:agent1@${REALM} SIP/2.0`,
      `Via: SIP/2.0/WSS x.invalid;branch=z9hG4bK${hex()}`,
      "Max-Forwards: 70",
      `To: <sip:agent1@${REALM}>`,
      `From: <sip:someone@${REALM}>;tag=${hex(4)}`,
      `Call-ID: ${hex()}`,
      `CSeq: 7 ${method}`,
      ...extra,
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");

  it("answers OPTIONS with 200 and Allow, methods without a handler with 501, and never an ACK, even a malformed one", async () => {
    const s = await socket();
    s.send(request("OPTIONS"));
    const options = await s.next();
    expect(options.status).toBe(200);
    expect(options.header("allow")?.split(/,\s*/)).toEqual(expect.arrayContaining(["REGISTER", "OPTIONS"]));
    for (const method of ["PUBLISH", "MESSAGE", "SUBSCRIBE"]) {
      s.send(request(method));
      const res = await s.next();
      expect(res.status, method).toBe(501);
      expect(res.header("cseq")).toBe(`7 ${method}`);
    }
    s.send(request("ACK"));
    s.send(request("ACK").replace(/Call-ID: .*\r\n/, ""));
    await s.expectSilence();
  });

  it("answers the CRLF keep-alive ping with a CRLF pong", async () => {
    const s = await socket();
    s.send("\r\n\r\n");
    expect(await s.nextText()).toBe("\r\n");
  });

  it("answers 400 to a request missing Call-ID, a broken header or a half message; drops junk; then still registers", async () => {
    const s = await socket();
    s.send(request("OPTIONS").replace(/Call-ID: .*\r\n/, ""));
    const noCallId = await s.next();
    expect(noCallId.status).toBe(400);
    expect(noCallId.startLine).toContain("Call-ID");
    s.send(request("OPTIONS").replace(/To: .*\r\n/, "To: <<garbage\r\n"));
    expect((await s.next()).status).toBe(400);
    s.send(request("OPTIONS").split("\r\n").slice(0, 7).join("\r\n"));
    expect((await s.next()).status).toBe(400);
    s.send(Buffer.from([0xff, 0xfe, 0x00, 0x01, 0x80, 0x81]));
    s.send(Buffer.from("REGISTER but not really\r\n\r\n"));
    s.send("hello");
    s.send("SIP/2.0 200 OK\r\nVia: SIP/2.0/WS x;branch=z9hG4bKnothing\r\nCSeq: bogus\r\n\r\n");
    await s.expectSilence();
    const p = new SipPhone(s, await device());
    expect((await p.register({ expires: 300 })).status).toBe(200);
  });

  it("answers a 200 KB message with 513 without parsing it, and keeps serving the socket", async () => {
    const s = await socket();
    s.send(request("OPTIONS", [`X-Padding: ${"a".repeat(200 * 1024)}`]));
    expect((await s.next()).status).toBe(513);
    s.send(request("OPTIONS"));
    expect((await s.next()).status).toBe(200);
  });

  it("keeps serving HTTP and SIP after a client floods junk and disconnects", async () => {
    const s = await socket();
    for (let i = 0; i < 200; i++) s.send(i % 2 ? Buffer.from([i, 0xff, 0x00]) : `INVITE ${"x".repeat(i)}\r\n`);
    await s.close();
    const p = await phone();
    expect((await p.register({ expires: 300 })).status).toBe(200);
    expect((await api.call("GET", `/v2/accounts/${accountId}/devices/status`, { token })).status).toBe(200);
  });
});

describe("the WebSocket upgrade", () => {
  it("agrees on the sip subprotocol and refuses a client that does not offer it", async () => {
    expect((await socket()).protocol).toBe("sip");
    await expect(SipSocket.connect(api.url, { protocols: [] })).rejects.toThrow(/upgrade refused: 400/);
    await expect(SipSocket.connect(api.url, { protocols: ["chat"] })).rejects.toThrow(/upgrade refused: 400/);
  });

  it("refuses an upgrade from a foreign Origin (403) or with a forged Host (421)", async () => {
    await expect(SipSocket.connect(api.url, { headers: { Origin: "http://evil.example" } })).rejects.toThrow(/upgrade refused: 403/);
    await expect(SipSocket.connect(api.url, { headers: { Host: "evil.example" } })).rejects.toThrow(/upgrade refused: 421/);
  });
});
