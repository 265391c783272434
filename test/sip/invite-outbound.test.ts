// Calls the server places to a registered device, answered by scripted phones: the INVITE as sip.js
// needs it, ringing, the answer and its ACK, forks to two registrations (CANCEL of the loser, a late
// 200 ACKed and BYEd), the best failure, cancel() and the 200 crossing it, no answer, socket close.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InfoDtmf, InviteOptions, OutboundCall } from "../../server/sip/call-signalling.js";
import { dialogOfInvite, hex, responseTo, SipPhone, SipSocket, TEST_SDP, tagOf, uriOf, type SipMessage, type TestDevice } from "../helpers/sip-client.js";
import { CALLS_REALM, startSipServer, type SipTestServer } from "../helpers/sip-server.js";

const OFFER = TEST_SDP.replace("40000", "50000");
const OPTIONS: InviteOptions = {
  offer: OFFER,
  from: { user: "5001", display: 'Sales "Queue"' },
  to: { user: "1002", display: "Alex Agent" },
  headers: [["X-Queue-Name", "Sales"]],
};

let server: SipTestServer;
const sockets: SipSocket[] = [];

beforeAll(async () => {
  server = await startSipServer();
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await server.close();
});

/** A registered phone of `device` (a fresh device unless given) on its own socket. */
async function registered(device?: TestDevice): Promise<SipPhone & { device: TestDevice }> {
  const d = device ?? (await server.device());
  const socket = await SipSocket.connect(server.url);
  sockets.push(socket);
  const p = new SipPhone(socket, { ...d, realm: CALLS_REALM });
  expect((await p.register({ expires: 300 })).status).toBe(200);
  return Object.assign(p, { device: d });
}

function invite(d: TestDevice, options: InviteOptions = OPTIONS): OutboundCall {
  const call = server.sip.calls.invite({ accountId: server.accountId, deviceId: d.id }, options);
  if (!call) throw new Error("no call: the device is not registered");
  return call;
}

/** Records the call's events in order. */
function record(call: OutboundCall): string[] {
  const seen: string[] = [];
  call.on("ringing", () => seen.push("ringing"));
  call.on("answered", (sdp) => seen.push(`answered:${sdp.length}`));
  call.on("rejected", (code, reason) => seen.push(`rejected:${code}:${reason}`));
  call.on("bye", () => seen.push("bye"));
  call.on("dtmf", (d: InfoDtmf) => seen.push(`dtmf:${d.digit}`));
  return seen;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 150 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

/** The phone answers the INVITE 200 with its SDP; returns the ACK the server sends. */
async function answer(p: SipPhone, inv: SipMessage, toTag = hex(4), body = TEST_SDP): Promise<SipMessage> {
  p.socket.send(responseTo(inv, 200, { toTag, contact: p.contact, body }));
  const ack = await p.socket.next();
  expect(ack.method).toBe("ACK");
  return ack;
}

/** A call answered by a single phone; returns the phone's side of the dialog. */
async function established() {
  const p = await registered();
  const call = invite(p.device);
  const seen = record(call);
  const inv = await p.socket.next();
  const toTag = hex(4);
  await answer(p, inv, toTag);
  await until(() => seen.includes(`answered:${TEST_SDP.length}`), "answered");
  return { p, call, seen, inv, dialog: dialogOfInvite(p.socket, inv, toTag) };
}

describe("the INVITE a device receives", () => {
  it("returns null for a device with no registration", async () => {
    const d = await server.device();
    expect(server.sip.calls.invite({ accountId: server.accountId, deviceId: d.id }, OPTIONS)).toBeNull();
  });

  it("goes to the registered contact over its socket, with the caller at the realm, the device's AOR, the offer and the extras", async () => {
    const p = await registered();
    const call = invite(p.device);
    const inv = await p.socket.next();
    expect(inv.method).toBe("INVITE");
    expect(inv.uri).toBe(p.contact);
    expect(inv.header("via")).toMatch(/^SIP\/2\.0\/WS 127\.0\.0\.1:\d+;branch=z9hG4bK\w+$/);
    expect(inv.header("from")).toMatch(new RegExp(`^"Sales \\\\"Queue\\\\"" <sip:5001@${CALLS_REALM.replace(/\./g, "\\.")}>;tag=\\w+$`));
    expect(inv.header("to")).toBe(`"Alex Agent" <sip:${p.options.username}@${CALLS_REALM}>`);
    expect(inv.header("call-id")).toBe(call.callId);
    expect(inv.header("cseq")).toBe("1 INVITE");
    expect(uriOf(inv.header("contact") ?? "")).toMatch(/^sip:switchboard@127\.0\.0\.1:\d+;transport=ws$/);
    expect(inv.header("content-type")).toBe("application/sdp");
    expect(inv.header("x-queue-name")).toBe("Sales");
    expect(inv.body).toBe(OFFER);
    expect(call.device).toEqual({ accountId: server.accountId, deviceId: p.device.id });
    call.cancel();
  });

  it("refuses extra headers that would replace the server's own or break the message", async () => {
    const p = await registered();
    const attempt = (headers: [string, string][]) => () => server.sip.calls.invite({ accountId: server.accountId, deviceId: p.device.id }, { ...OPTIONS, headers });
    expect(attempt([["Call-ID", "mine"]])).toThrow(TypeError);
    expect(attempt([["X-Evil", "a\r\nVia: x"]])).toThrow(TypeError);
    expect(attempt([["Bad Name", "x"]])).toThrow(TypeError);
    await p.socket.expectSilence(200);
  });
});

describe("ringing, the answer and the dialog", () => {
  it("emits `ringing` once for 180 and 183, then `answered` with the SDP after ACKing the 200 at its Contact", async () => {
    const p = await registered();
    const call = invite(p.device);
    const seen = record(call);
    const inv = await p.socket.next();
    const toTag = hex(4);
    p.socket.send(responseTo(inv, 100));
    p.socket.send(responseTo(inv, 180, { toTag, contact: p.contact }));
    p.socket.send(responseTo(inv, 183, { toTag, contact: p.contact }));
    await until(() => seen.length > 0, "ringing");
    const contact = `sip:${hex(4)}@${hex(4)}.invalid;transport=ws`;
    p.socket.send(responseTo(inv, 200, { toTag, contact, body: TEST_SDP }));
    const ack = await p.socket.next();
    expect(ack.method).toBe("ACK");
    expect(ack.uri).toBe(contact);
    expect(ack.header("cseq")).toBe("1 ACK");
    expect(tagOf(ack.header("to") ?? "")).toBe(toTag);
    expect(ack.header("from")).toBe(inv.header("from"));
    expect(ack.header("via")).not.toBe(inv.header("via"));
    await until(() => seen.length === 2, "answered");
    expect(seen).toEqual(["ringing", `answered:${TEST_SDP.length}`]);

    // A retransmitted 200 gets the same ACK again, and no second event.
    p.socket.send(responseTo(inv, 200, { toTag, contact, body: TEST_SDP }));
    expect((await p.socket.next()).text).toBe(ack.text);
    expect(seen).toHaveLength(2);
    const done = call.hangup();
    const bye = await p.socket.next();
    expect(bye.method).toBe("BYE");
    p.socket.send(responseTo(bye, 200));
    await done;
  });

  it("passes the device's BYE, INFO and re-INVITE on as `bye`, `dtmf` and `reinvite`", async () => {
    const { call, seen, dialog } = await established();
    call.on("reinvite", (offer, respond) => respond.answer(`${offer}a=answered\r\n`));
    expect((await dialog.request("INFO", { body: "Signal=7\r\nDuration=100", contentType: "application/dtmf-relay" })).status).toBe(200);
    const ok = await dialog.request("INVITE", { body: TEST_SDP });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe(`${TEST_SDP}a=answered\r\n`);
    dialog.send("ACK");
    expect((await dialog.request("BYE")).status).toBe(200);
    expect(seen.slice(1)).toEqual(["dtmf:7", "bye"]);
  });

  it("re-INVITEs the device (hold) at its Contact within the dialog and resolves with its answer", async () => {
    const { p, call, inv, dialog } = await established();
    const held = call.reinvite("v=0 hold\r\n");
    const reinvite = await p.socket.next();
    expect(reinvite.method).toBe("INVITE");
    expect(reinvite.uri).toBe(p.contact);
    expect(reinvite.header("call-id")).toBe(inv.header("call-id"));
    expect(reinvite.header("from")).toBe(inv.header("from"));
    expect(reinvite.header("to")).toBe(dialog.localParty);
    expect(reinvite.header("cseq")).toBe("2 INVITE");
    p.socket.send(responseTo(reinvite, 200, { contact: p.contact, body: "v=0 held\r\n" }));
    expect(await held).toBe("v=0 held\r\n");
    expect((await p.socket.next()).method).toBe("ACK");
  });

  it("sends a re-INVITE the phone could not take yet again: after 500's Retry-After, after 491's wait (2.1-4 s: it chose the Call-ID)", async () => {
    const { p, call } = await established();
    const held = call.reinvite("v=0 hold\r\n");
    const first = await p.socket.next();
    expect(first.header("cseq")).toBe("2 INVITE");
    // Still busy with the INVITE it answered (RFC 6337 §4.3): 500 and a Retry-After.
    p.socket.send(responseTo(first, 500, { contact: p.contact, extra: ["Retry-After: 1"] }));
    expect((await p.socket.next()).method).toBe("ACK");
    await expect(p.socket.next(300), "nothing before the second has passed").rejects.toThrow();
    server.clock.advance(2_000);
    const second = await p.socket.next(3000);
    expect(second.method).toBe("INVITE");
    expect(second.header("cseq")).toBe("3 INVITE");
    expect(second.body).toBe("v=0 hold\r\n");
    // Its own re-INVITE crossed ours: 491, then ours again within 4 s.
    p.socket.send(responseTo(second, 491, { contact: p.contact }));
    expect((await p.socket.next()).method).toBe("ACK");
    server.clock.advance(4_100);
    const third = await p.socket.next(3000);
    expect(third.header("cseq")).toBe("4 INVITE");
    p.socket.send(responseTo(third, 200, { contact: p.contact, body: "v=0 held\r\n" }));
    expect(await held).toBe("v=0 held\r\n");
    expect((await p.socket.next()).method).toBe("ACK");
  });

  it("gives a re-INVITE up after two retries, and at once on a 500 without Retry-After or any other refusal", async () => {
    const { p, call } = await established();
    const refused = call.reinvite("v=0 hold\r\n");
    for (let attempt = 0; attempt < 3; attempt++) {
      const inv = await p.socket.next(3000);
      expect(inv.method).toBe("INVITE");
      p.socket.send(responseTo(inv, 500, { contact: p.contact, extra: ["Retry-After: 1"] }));
      expect((await p.socket.next()).method).toBe("ACK");
      server.clock.advance(2_000);
    }
    await expect(refused).rejects.toMatchObject({ status: 500 });
    await expect(p.socket.next(300)).rejects.toThrow();

    const plain = call.reinvite("v=0 hold\r\n");
    const inv = await p.socket.next(3000);
    p.socket.send(responseTo(inv, 500, { contact: p.contact }));
    await expect(plain).rejects.toMatchObject({ status: 500 });
    expect((await p.socket.next()).method).toBe("ACK");
    server.clock.advance(11_000);
    await expect(p.socket.next(300)).rejects.toThrow();
  });

  it("sends BYE on hangup() and resolves on its 200", async () => {
    const { p, call, seen } = await established();
    const done = call.hangup();
    const bye = await p.socket.next();
    expect(bye.method).toBe("BYE");
    expect(bye.uri).toBe(p.contact);
    expect(bye.header("cseq")).toBe("2 BYE");
    p.socket.send(responseTo(bye, 200));
    await done;
    expect(seen).toEqual([`answered:${TEST_SDP.length}`]);
  });

  it("ACKs and BYEs a 200 without SDP, and reports 488", async () => {
    const p = await registered();
    const call = invite(p.device);
    const seen = record(call);
    const inv = await p.socket.next();
    p.socket.send(responseTo(inv, 200, { toTag: hex(4), contact: p.contact }));
    expect((await p.socket.next()).method).toBe("ACK");
    expect((await p.socket.next()).method).toBe("BYE");
    await until(() => seen.length > 0, "rejected");
    expect(seen).toEqual(["rejected:488:No SDP answer"]);
  });
});

/** Two registrations of one device, and a call ringing both: each phone with the INVITE it got. */
async function forked() {
  const first = await registered();
  const second = await registered(first.device);
  const seen = record(invite(first.device));
  const [a, b] = await Promise.all([first.socket.next(), second.socket.next()]);
  return { first, second, seen, a, b };
}

describe("forking to every registration of the device", () => {
  it("INVITEs both contacts; the first 200 wins, the other fork is CANCELled (answered elsewhere) and its 487 ACKed", async () => {
    const { first, second, seen, a, b } = await forked();
    expect(a.uri).toBe(first.contact);
    expect(b.uri).toBe(second.contact);
    expect(a.header("call-id")).toBe(b.header("call-id"));
    expect(a.header("via")).not.toBe(b.header("via"));
    second.socket.send(responseTo(b, 180, { toTag: hex(4) }));
    await answer(first, a);
    const cancel = await second.socket.next();
    expect(cancel.method).toBe("CANCEL");
    expect(cancel.uri).toBe(b.uri);
    expect(cancel.header("via")).toBe(b.header("via"));
    expect(cancel.header("cseq")).toBe("1 CANCEL");
    expect(cancel.header("reason")).toContain("cause=200");
    second.socket.send(responseTo(cancel, 200));
    second.socket.send(responseTo(b, 487, { toTag: hex(4) }));
    const ack = await second.socket.next();
    expect(ack.method).toBe("ACK");
    expect(ack.header("via")).toBe(b.header("via"));
    expect(ack.header("cseq")).toBe("1 ACK");
    expect(seen).toEqual(["ringing", `answered:${TEST_SDP.length}`]);
  });

  it("ACKs and BYEs a late 200 from the other fork that crossed the CANCEL", async () => {
    const { first, second, seen, a, b } = await forked();
    second.socket.send(responseTo(b, 180, { toTag: hex(4) }));
    await answer(first, a);
    expect((await second.socket.next()).method).toBe("CANCEL");
    const lateTag = hex(4);
    second.socket.send(responseTo(b, 200, { toTag: lateTag, contact: second.contact, body: TEST_SDP }));
    const ack = await second.socket.next();
    const bye = await second.socket.next();
    expect([ack.method, bye.method]).toEqual(["ACK", "BYE"]);
    expect(tagOf(bye.header("to") ?? "")).toBe(lateTag);
    expect(bye.uri).toBe(second.contact);
    expect(seen).toEqual(["ringing", `answered:${TEST_SDP.length}`]);
  });

  it("reports the best failure once every fork failed (4xx over 5xx), and a 6xx at once, CANCELling the rest", async () => {
    const { first, second, seen, a, b } = await forked();
    first.socket.send(responseTo(a, 503, { toTag: hex(4), reason: "Overloaded" }));
    expect((await first.socket.next()).method).toBe("ACK");
    expect(seen).toEqual([]);
    second.socket.send(responseTo(b, 486, { toTag: hex(4), reason: "Busy Here" }));
    expect((await second.socket.next()).method).toBe("ACK");
    await until(() => seen.length > 0, "rejected");
    expect(seen).toEqual(["rejected:486:Busy Here"]);

    const call2 = invite(first.device);
    const seen2 = record(call2);
    const [a2, b2] = await Promise.all([first.socket.next(), second.socket.next()]);
    second.socket.send(responseTo(b2, 180, { toTag: hex(4) }));
    first.socket.send(responseTo(a2, 603, { toTag: hex(4), reason: "Decline" }));
    expect((await first.socket.next()).method).toBe("ACK");
    expect((await second.socket.next()).method).toBe("CANCEL");
    expect(seen2).toEqual(["ringing", "rejected:603:Decline"]);
  });
});

/** A call ringing a single phone: its 180 sent and `ringing` heard. */
async function ringing() {
  const p = await registered();
  const call = invite(p.device);
  const seen = record(call);
  const inv = await p.socket.next();
  const toTag = hex(4);
  p.socket.send(responseTo(inv, 180, { toTag }));
  await until(() => seen.length > 0, "ringing");
  return { p, call, seen, inv, toTag };
}

describe("cancel() and no answer", () => {
  it("CANCELs a ringing fork, ACKs its 487, and emits nothing more", async () => {
    const { p, call, seen, inv, toTag } = await ringing();
    call.cancel();
    call.cancel();
    const cancel = await p.socket.next();
    expect(cancel.method).toBe("CANCEL");
    expect(cancel.header("reason")).toBeUndefined();
    p.socket.send(responseTo(cancel, 200, { toTag }));
    p.socket.send(responseTo(inv, 487, { toTag }));
    expect((await p.socket.next()).method).toBe("ACK");
    await p.socket.expectSilence(200);
    expect(seen).toEqual(["ringing"]);
  });

  it("holds a CANCEL asked before any provisional response until the first one (§9.1)", async () => {
    const p = await registered();
    const call = invite(p.device);
    const inv = await p.socket.next();
    call.cancel();
    await p.socket.expectSilence(200);
    p.socket.send(responseTo(inv, 100));
    expect((await p.socket.next()).method).toBe("CANCEL");
  });

  it("ACKs and BYEs a 200 that crossed the CANCEL, without `answered`", async () => {
    const { p, call, seen, inv } = await ringing();
    call.cancel();
    const cancel = await p.socket.next();
    p.socket.send(responseTo(inv, 200, { toTag: hex(4), contact: p.contact, body: TEST_SDP }));
    p.socket.send(responseTo(cancel, 200));
    expect((await p.socket.next()).method).toBe("ACK");
    expect((await p.socket.next()).method).toBe("BYE");
    expect(seen).toEqual(["ringing"]);
    await expect(call.reinvite(OFFER)).rejects.toThrow();
  });

  it("gives up after 60 s without an answer on the clock: CANCEL and `rejected` 408", async () => {
    const { p, seen } = await ringing();
    server.clock.advance(61_000);
    expect((await p.socket.next(3000)).method).toBe("CANCEL");
    expect(seen).toEqual(["ringing", "rejected:408:Request Timeout"]);
  });
});

describe("a socket that closes mid-call", () => {
  it("ends an answered call with `bye`", async () => {
    const { p, seen } = await established();
    await p.socket.close();
    await until(() => seen.includes("bye"), "bye after close");
    expect(seen).toEqual([`answered:${TEST_SDP.length}`, "bye"]);
  });

  it("fails a ringing fork as 480 when its socket closes, once the others failed too", async () => {
    const { first, second, seen, b } = await forked();
    await first.socket.close();
    await new Promise((r) => setTimeout(r, 100));
    expect(seen).toEqual([]);
    second.socket.send(responseTo(b, 603, { toTag: hex(4), reason: "Decline" }));
    await until(() => seen.length > 0, "rejected");
    expect(seen).toEqual(["rejected:603:Decline"]);

    const third = await registered();
    const alone = invite(third.device);
    const seenAlone = record(alone);
    await third.socket.next();
    await third.socket.close();
    await until(() => seenAlone.length > 0, "rejected after close");
    expect(seenAlone).toEqual(["rejected:480:Temporarily Unavailable"]);
  });
});
