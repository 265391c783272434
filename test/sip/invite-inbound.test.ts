// Calls a device places to the server, driven by a scripted phone: the 407 digest, 100/180/200 and
// the ACK, CANCEL (before and after the answer), rejections, bad INVITEs, and the dialog after:
// BYE, INFO DTMF, re-INVITE both ways, OPTIONS, 481 for unknown dialogs, the ACK timeout, socket close.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboundCall, InfoDtmf } from "../../server/sip/call-signalling.js";
import {
  digestParams,
  hex,
  PhoneCall,
  PhoneDialog,
  responseTo,
  SipPhone,
  SipSocket,
  TEST_SDP,
  tagOf,
  uriOf,
  type SipMessage,
} from "../helpers/sip-client.js";
import { CALLS_REALM, startSipServer, type SipTestServer } from "../helpers/sip-server.js";

const SERVER_SDP = TEST_SDP.replace("40000", "50000");

let server: SipTestServer;
const sockets: SipSocket[] = [];
const waiting: ((call: InboundCall) => void)[] = [];
const arrived: InboundCall[] = [];

beforeAll(async () => {
  server = await startSipServer();
  server.sip.calls.onInbound((call) => {
    const waiter = waiting.shift();
    if (waiter) waiter(call);
    else arrived.push(call);
  });
});
afterAll(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await server.close();
});

function nextCall(): Promise<InboundCall> {
  const call = arrived.shift();
  if (call) return Promise.resolve(call);
  return new Promise((resolve) => waiting.push(resolve));
}

/** A phone of a fresh device on its own socket; it never registers (placing calls needs no registration). */
async function phone(): Promise<SipPhone & { deviceId: string }> {
  const d = await server.device();
  const socket = await SipSocket.connect(server.url);
  sockets.push(socket);
  return Object.assign(new SipPhone(socket, { ...d, realm: CALLS_REALM }), { deviceId: d.id });
}

/** Records a call's events in order, as `name` or `name:detail`. */
function record(call: InboundCall): string[] {
  const seen: string[] = [];
  call.on("bye", () => seen.push("bye"));
  call.on("cancel", () => seen.push("cancel"));
  call.on("dtmf", (d: InfoDtmf) => seen.push(`dtmf:${d.digit}:${d.durationMs ?? ""}`));
  return seen;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 150 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

/** Places a call through the 407 and waits for the engine's side of it. */
async function placed(dialled = "1002"): Promise<{ p: SipPhone; pc: PhoneCall; call: InboundCall; seen: string[] }> {
  const p = await phone();
  const pc = new PhoneCall(p, dialled);
  const trying = await pc.place();
  expect(trying.status).toBe(100);
  const call = await nextCall();
  return { p, pc, call, seen: record(call) };
}

/** Answers the call; returns the 200 and the phone's dialog (ACK not sent yet). */
async function answered(pc: PhoneCall, call: InboundCall): Promise<{ ok: SipMessage; dialog: PhoneDialog; acked: Promise<void> }> {
  const acked = call.answer(SERVER_SDP);
  const ok = await pc.phone.socket.next();
  expect(ok.status).toBe(200);
  return { ok, dialog: pc.dialog(ok), acked };
}

/** A call answered and ACKed. */
async function established(): Promise<{ p: SipPhone; pc: PhoneCall; call: InboundCall; seen: string[]; dialog: PhoneDialog }> {
  const c = await placed();
  const { dialog, acked } = await answered(c.pc, c.call);
  dialog.send("ACK");
  await acked;
  return { ...c, dialog };
}

describe("INVITE from a device: digest, 100 Trying, and the call handed to the engine", () => {
  it("challenges with 407 Proxy-Authenticate for the account realm, takes the ACK quietly, then answers 100 Trying without a To tag", async () => {
    const p = await phone();
    const pc = new PhoneCall(p, "1002");
    p.socket.send(pc.inviteText());
    const challenge = await p.socket.next();
    expect(challenge.status).toBe(407);
    expect(challenge.header("www-authenticate")).toBeUndefined();
    const params = digestParams(challenge.header("proxy-authenticate") ?? "");
    expect(params).toMatchObject({ realm: CALLS_REALM, qop: "auth", algorithm: "MD5" });
    expect(tagOf(challenge.header("to") ?? "")).toBeTruthy();
    p.socket.send(pc.ackFailureText(challenge));
    await p.socket.expectSilence(200);
    expect(arrived).toHaveLength(0);

    const trying = await pc.place();
    expect(trying.status).toBe(100);
    expect(trying.header("to")).toBe(pc.to);
    expect(trying.header("cseq")).toBe(`${pc.cseq} INVITE`);
    (await nextCall()).reject(486);
    expect((await p.socket.next()).status).toBe(486);
  });

  it("hands the engine the authenticated device, the parties, the number dialled, the offer and the headers", async () => {
    const p = await phone();
    const pc = new PhoneCall(p, "5001");
    expect((await pc.place({ extra: ["X-Custom: one", "X-Custom: two"] })).status).toBe(100);
    const call = await nextCall();
    expect(call.callId).toBe(pc.callId);
    expect(call.device).toEqual({ accountId: server.accountId, deviceId: p.deviceId });
    expect(call.from).toEqual({ user: p.options.username, display: "Test Phone" });
    expect(call.to).toEqual({ user: "5001" });
    expect(call.dialled).toBe("5001");
    expect(call.offer).toBe(TEST_SDP);
    expect(call.headers.get("x-custom")).toEqual(["one", "two"]);
    expect(call.headers.get("call-id")).toEqual([pc.callId]);
    call.reject(486);
    expect((await p.socket.next()).status).toBe(486);
  });

  it("refuses a wrong password or an unknown username with 403 and never bothers the engine", async () => {
    const p = await phone();
    expect((await new PhoneCall(p, "1002").place({}, "wrong")).status).toBe(403);
    const stranger = new SipPhone(p.socket, { username: "nobody", password: "x", realm: CALLS_REALM });
    expect((await new PhoneCall(stranger, "1002").place()).status).toBe(403);
    await p.socket.expectSilence(200);
    expect(arrived).toHaveLength(0);
  });

  it("answers 488 to an INVITE without SDP and 415 to a body of another type, after the digest", async () => {
    const p = await phone();
    const none = await new PhoneCall(p, "1002").place({ sdp: null });
    expect(none.status).toBe(488);
    const text = await new PhoneCall(p, "1002").place({ sdp: "hello", contentType: "text/plain" });
    expect(text.status).toBe(415);
    expect(text.header("accept")).toBe("application/sdp");
    expect(arrived).toHaveLength(0);
  });

  it("answers 400 to an INVITE without a From tag, without a Contact, or with a broken From, before any challenge", async () => {
    const p = await phone();
    p.socket.send(new PhoneCall(p, "1002").inviteText({ noFromTag: true }));
    const noTag = await p.socket.next();
    expect(noTag.status).toBe(400);
    expect(noTag.startLine).toContain("Missing From tag");
    p.socket.send(new PhoneCall(p, "1002").inviteText({ noContact: true }));
    expect((await p.socket.next()).status).toBe(400);
    p.socket.send(new PhoneCall(p, "1002").inviteText().replace(/From: .*\r\n/, "From: <<broken>;tag=1\r\n"));
    expect((await p.socket.next()).status).toBe(400);
  });

  it("answers 420 with Unsupported to an INVITE that requires an extension other than session timers", async () => {
    const p = await phone();
    const res = await new PhoneCall(p, "1002").place({ extra: ["Require: 100rel, timer"] });
    expect(res.status).toBe(420);
    expect(res.header("unsupported")).toBe("100rel");
  });
});

describe("the engine's answers: 180, 200 and the ACK, rejections", () => {
  it("sends 180 once with a To tag and Contact, then 200 with the same tag, Contact and SDP; answer() resolves on the ACK", async () => {
    const { pc, call, seen } = await placed();
    call.ringing();
    call.ringing();
    const ringing = await pc.phone.socket.next();
    expect(ringing.status).toBe(180);
    const tag = tagOf(ringing.header("to") ?? "");
    expect(tag).toMatch(/^[0-9a-f]+$/);
    expect(uriOf(ringing.header("contact") ?? "")).toMatch(/^sip:switchboard@127\.0\.0\.1:\d+;transport=ws$/);

    let done = false;
    const acked = call.answer(SERVER_SDP).then(() => {
      done = true;
    });
    const ok = await pc.phone.socket.next();
    expect(ok.status).toBe(200);
    expect(tagOf(ok.header("to") ?? "")).toBe(tag);
    expect(ok.header("content-type")).toBe("application/sdp");
    expect(ok.body).toBe(SERVER_SDP);
    expect(uriOf(ok.header("contact") ?? "")).toMatch(/^sip:switchboard@/);
    expect(ok.header("allow")).toContain("INVITE");
    await new Promise((r) => setTimeout(r, 100));
    expect(done).toBe(false);

    pc.dialog(ok).send("ACK");
    await acked;
    expect(done).toBe(true);
    await expect(call.answer(SERVER_SDP)).rejects.toThrow(/cannot be answered/);
    expect(seen).toEqual([]);
  });

  it("sends the engine's error with a To tag, takes the ACK quietly, and ignores a second answer", async () => {
    const { pc, call } = await placed();
    call.reject(603, "Declined By Test");
    const declined = await pc.phone.socket.next();
    expect(declined.status).toBe(603);
    expect(declined.startLine).toBe("SIP/2.0 603 Declined By Test");
    expect(tagOf(declined.header("to") ?? "")).toBeTruthy();
    pc.phone.socket.send(pc.ackFailureText(declined));
    call.reject(486);
    call.ringing();
    await expect(call.answer(SERVER_SDP)).rejects.toThrow();
    await pc.phone.socket.expectSilence(200);
    expect(() => call.reject(200)).toThrow(RangeError);
  });

  it("sends Retry-After with a refusal that has one (an overloaded media engine's 503), none otherwise", async () => {
    const { pc, call } = await placed();
    call.reject(503, "Media Overloaded", 5);
    const refused = await pc.phone.socket.next();
    expect(refused.startLine).toBe("SIP/2.0 503 Media Overloaded");
    expect(refused.header("retry-after")).toBe("5");
    pc.phone.socket.send(pc.ackFailureText(refused));
    const other = await placed();
    other.call.reject(486);
    const busy = await other.pc.phone.socket.next();
    expect(busy.status).toBe(486);
    expect(busy.header("retry-after")).toBeUndefined();
    other.pc.phone.socket.send(other.pc.ackFailureText(busy));
  });

  it("answers 480 itself before an answer when the engine hangs up", async () => {
    const { pc, call } = await placed();
    await call.hangup();
    expect((await pc.phone.socket.next()).status).toBe(480);
  });

  it("sends BYE when the ACK never comes (32 s on the clock) and rejects answer()", async () => {
    const { pc, call, seen } = await placed();
    const { acked } = await answered(pc, call);
    const outcome = acked.then(
      () => "acked",
      (err: Error) => err.message,
    );
    server.clock.advance(33_000);
    const bye = await pc.phone.socket.next(3000);
    expect(bye.method).toBe("BYE");
    expect(bye.uri).toBe(pc.phone.contact);
    expect(await outcome).toMatch(/no ACK/);
    pc.phone.socket.send(responseTo(bye, 200));
    expect(seen).toEqual([]);
  });
});

describe("CANCEL", () => {
  it("before the final response: 200 to the CANCEL with the call's tag, 487 to the INVITE, and `cancel`", async () => {
    const { pc, call, seen } = await placed();
    call.ringing();
    const ringing = await pc.phone.socket.next();
    pc.phone.socket.send(pc.cancelText());
    const ok = await pc.phone.socket.next();
    expect(ok.status).toBe(200);
    expect(ok.header("cseq")).toBe(`${pc.cseq} CANCEL`);
    expect(tagOf(ok.header("to") ?? "")).toBe(tagOf(ringing.header("to") ?? ""));
    const terminated = await pc.phone.socket.next();
    expect(terminated.status).toBe(487);
    expect(terminated.header("cseq")).toBe(`${pc.cseq} INVITE`);
    expect(seen).toEqual(["cancel"]);
    pc.phone.socket.send(pc.ackFailureText(terminated));
    await expect(call.answer(SERVER_SDP)).rejects.toThrow();
    await pc.phone.socket.expectSilence(200);
  });

  it("after the 200: 200 to the CANCEL and nothing else; a CANCEL matching nothing gets 481", async () => {
    const { pc, call, seen, dialog } = await established();
    pc.phone.socket.send(pc.cancelText());
    expect((await pc.phone.socket.next()).status).toBe(200);
    await pc.phone.socket.expectSilence(200);
    expect(seen).toEqual([]);
    const stray = new PhoneCall(pc.phone, "1002");
    stray.inviteText();
    pc.phone.socket.send(stray.cancelText());
    expect((await pc.phone.socket.next()).status).toBe(481);
    expect((await dialog.request("BYE")).status).toBe(200);
    expect(seen).toEqual(["bye"]);
    expect(call.callId).toBe(pc.callId);
  });

  it("a BYE in the early dialog ends the call like a CANCEL: 200, 487 to the INVITE, `cancel`", async () => {
    const { pc, call, seen } = await placed();
    call.ringing();
    const ringing = await pc.phone.socket.next();
    const dialog = pc.dialog(ringing);
    dialog.send("BYE");
    const [first, second] = [await pc.phone.socket.next(), await pc.phone.socket.next()];
    expect([first.status, second.status]).toEqual([200, 487]);
    expect(seen).toEqual(["cancel"]);
  });
});

describe("inside the dialog", () => {
  it("answers the device's BYE with 200 and emits `bye`", async () => {
    const { seen, dialog } = await established();
    const ok = await dialog.request("BYE");
    expect(ok.status).toBe(200);
    expect(ok.header("cseq")).toBe(`${dialog.cseq} BYE`);
    expect(seen).toEqual(["bye"]);
    expect((await dialog.request("BYE")).status).toBe(481);
  });

  it("answers INFO DTMF (dtmf-relay and dtmf) with 200 and emits `dtmf`; other bodies 415; an empty INFO 200", async () => {
    const { seen, dialog } = await established();
    expect((await dialog.request("INFO", { body: "Signal=5\r\nDuration=160\r\n", contentType: "application/dtmf-relay" })).status).toBe(200);
    expect((await dialog.request("INFO", { body: "#", contentType: "application/dtmf" })).status).toBe(200);
    const other = await dialog.request("INFO", { body: "<xml/>", contentType: "application/xml" });
    expect(other.status).toBe(415);
    expect(other.header("accept")).toContain("application/dtmf-relay");
    expect((await dialog.request("INFO", { body: "Signal=Z", contentType: "application/dtmf-relay" })).status).toBe(400);
    expect((await dialog.request("INFO")).status).toBe(200);
    expect(seen).toEqual(["dtmf:5:160", "dtmf:#:"]);
  });

  it("answers OPTIONS in the dialog with 200 and Allow, and 500 to a request with an older CSeq", async () => {
    const { dialog } = await established();
    const options = await dialog.request("OPTIONS");
    expect(options.status).toBe(200);
    expect(options.header("allow")?.split(/,\s*/)).toEqual(expect.arrayContaining(["INVITE", "ACK", "CANCEL", "BYE", "INFO", "OPTIONS"]));
    expect((await dialog.request("INFO", { cseq: 1 })).status).toBe(500);
  });

  it("refuses every request in the dialog from another connection with 403, ignores its ACK, and the call goes on", async () => {
    const { seen, dialog } = await established();
    // Another device's connection that has learnt the call's Call-ID and both tags.
    const other = await phone();
    const intruder = new PhoneDialog(other.socket, dialog.callId, dialog.localParty, dialog.remoteParty, dialog.remoteTarget, dialog.cseq + 10);
    for (const method of ["BYE", "INFO", "UPDATE", "OPTIONS"]) {
      const refused = await intruder.request(method);
      expect([refused.status, refused.startLine], method).toEqual([403, "SIP/2.0 403 Not Your Call"]);
    }
    const reinvite = await intruder.request("INVITE", { body: TEST_SDP });
    expect([reinvite.status, reinvite.startLine]).toEqual([403, "SIP/2.0 403 Not Your Call"]);
    intruder.send("ACK", { cseq: intruder.cseq });
    await other.socket.expectSilence(200);
    expect(seen).toEqual([]);
    // The device's own requests still go through with its next CSeq: none of the intruder's was taken.
    expect((await dialog.request("INFO", { body: "Signal=7\r\nDuration=100\r\n", contentType: "application/dtmf-relay" })).status).toBe(200);
    expect((await dialog.request("BYE")).status).toBe(200);
    expect(seen).toEqual(["dtmf:7:100", "bye"]);
  });

  it("answers 481 to BYE, INFO, re-INVITE and OPTIONS naming a dialog that does not exist", async () => {
    const p = await phone();
    const ghost = new PhoneDialog(p.socket, hex(), `<sip:${p.options.username}@${CALLS_REALM}>;tag=${hex(4)}`, `<sip:1002@${CALLS_REALM}>;tag=${hex(4)}`, `sip:1002@${CALLS_REALM}`, 1);
    for (const method of ["BYE", "INFO", "OPTIONS"]) expect((await ghost.request(method)).status, method).toBe(481);
    expect((await ghost.request("INVITE", { body: TEST_SDP })).status).toBe(481);
    ghost.send("ACK", { cseq: 3 });
    await p.socket.expectSilence(200);
  });

  it("hands a re-INVITE to the engine: its answer goes in a 200 (then the ACK), its refusal as the error", async () => {
    const { call, dialog } = await established();
    const offers: string[] = [];
    let mode: "answer" | "reject" = "answer";
    call.on("reinvite", (offer, respond) => {
      offers.push(offer);
      if (mode === "answer") respond.answer("v=0 held\r\n");
      else respond.reject(488);
    });
    const held = TEST_SDP.replace("sendrecv", "sendonly");
    const ok = await dialog.request("INVITE", { body: held });
    expect(ok.status).toBe(200);
    expect(ok.body).toBe("v=0 held\r\n");
    expect(ok.header("content-type")).toBe("application/sdp");
    dialog.send("ACK");
    mode = "reject";
    const refused = await dialog.request("INVITE", { body: TEST_SDP });
    expect(refused.status).toBe(488);
    expect(offers).toEqual([held, TEST_SDP]);
    // No offer: refused without asking the engine.
    expect((await dialog.request("INVITE")).status).toBe(488);
    expect(offers).toHaveLength(2);
  });

  it("refuses a re-INVITE with 488 when the engine does not listen, and with 500 + Retry-After while one is pending", async () => {
    const { call, dialog } = await established();
    expect((await dialog.request("INVITE", { body: TEST_SDP })).status).toBe(488);
    let later: ((sdp: string) => void) | null = null;
    call.on("reinvite", (_offer, respond) => {
      later = (sdp) => respond.answer(sdp);
    });
    dialog.send("INVITE", { body: TEST_SDP });
    await until(() => later !== null, "re-INVITE handed over");
    const second = await dialog.request("INVITE", { body: TEST_SDP });
    expect(second.status).toBe(500);
    expect(Number(second.header("retry-after"))).toBeLessThanOrEqual(10);
  });

  it("sends the engine's re-INVITE to the device's Contact and resolves with its answer, ACKing the 200", async () => {
    const { pc, call, dialog } = await established();
    const answer = call.reinvite("v=0 hold\r\n");
    const invite = await pc.phone.socket.next();
    expect(invite.method).toBe("INVITE");
    expect(invite.uri).toBe(pc.phone.contact);
    expect(invite.header("from")).toBe(dialog.remoteParty);
    expect(invite.header("to")).toBe(pc.from);
    expect(invite.header("cseq")).toBe("1 INVITE");
    expect(invite.body).toBe("v=0 hold\r\n");
    pc.phone.socket.send(responseTo(invite, 200, { contact: pc.phone.contact, body: "v=0 phone\r\n" }));
    expect(await answer).toBe("v=0 phone\r\n");
    const ack = await pc.phone.socket.next();
    expect(ack.method).toBe("ACK");
    expect(ack.header("cseq")).toBe("1 ACK");

    const refused = call.reinvite("v=0 again\r\n");
    const second = await pc.phone.socket.next();
    expect(second.header("cseq")).toBe("2 INVITE");
    pc.phone.socket.send(responseTo(second, 488));
    await expect(refused).rejects.toThrow(/488/);
    const ackFailure = await pc.phone.socket.next();
    expect(ackFailure.method).toBe("ACK");
    expect(ackFailure.header("via")).toBe(second.header("via"));
  });

  it("holds its own re-INVITE until the ACK of the device's has come, and answers a crossing re-INVITE 491", async () => {
    const { pc, call, dialog } = await established();
    call.on("reinvite", (_offer, respond) => respond.answer(SERVER_SDP));
    expect((await dialog.request("INVITE", { body: TEST_SDP })).status).toBe(200);
    const answer = call.reinvite("v=0 hold\r\n");
    await pc.phone.socket.expectSilence(200);
    dialog.send("ACK");
    const invite = await pc.phone.socket.next();
    expect(invite.method).toBe("INVITE");
    expect(invite.body).toBe("v=0 hold\r\n");
    // Glare: the device re-INVITEs while the server's is pending.
    expect((await dialog.request("INVITE", { body: TEST_SDP })).status).toBe(491);
    pc.phone.socket.send(responseTo(invite, 200, { contact: pc.phone.contact, body: "v=0 phone\r\n" }));
    expect(await answer).toBe("v=0 phone\r\n");
  });

  it("sends BYE on hangup() and resolves when the device answers it", async () => {
    const { pc, call, seen } = await established();
    let done = false;
    const hungUp = call.hangup().then(() => {
      done = true;
    });
    const bye = await pc.phone.socket.next();
    expect(bye.method).toBe("BYE");
    expect(bye.uri).toBe(pc.phone.contact);
    expect(bye.header("cseq")).toBe("1 BYE");
    expect(done).toBe(false);
    pc.phone.socket.send(responseTo(bye, 200));
    await hungUp;
    expect(seen).toEqual([]);
    await expect(call.reinvite(TEST_SDP)).rejects.toThrow();
  });
});

describe("a socket that closes mid-call", () => {
  it("ends an answered call with `bye`", async () => {
    const { p, seen } = await established();
    await p.socket.close();
    await until(() => seen.length > 0, "bye after close");
    expect(seen).toEqual(["bye"]);
  });

  it("ends a ringing call with `cancel`", async () => {
    const { p, call, seen } = await placed();
    call.ringing();
    await p.socket.next();
    await p.socket.close();
    await until(() => seen.length > 0, "cancel after close");
    expect(seen).toEqual(["cancel"]);
  });
});

describe("no call engine", () => {
  it("answers 480 when nothing takes inbound calls", async () => {
    const bare = await startSipServer();
    try {
      const d = await bare.device();
      const socket = await SipSocket.connect(bare.url);
      const p = new SipPhone(socket, { ...d, realm: CALLS_REALM });
      expect((await new PhoneCall(p, "1002").place()).status).toBe(100);
      expect((await socket.next()).status).toBe(480);
      await socket.close();
    } finally {
      await bare.close();
    }
  });
});

describe("session timers (RFC 4028), as JsSIP uses them by default", () => {
  const TIMER = ["Supported: timer, ice, replaces, outbound", "Session-Expires: 90"];

  /** A call placed with these extra INVITE headers, answered and ACKed; returns the 200 too. */
  async function establishedWith(extra: string[]): Promise<{ ok: SipMessage; dialog: PhoneDialog; seen: string[] }> {
    const p = await phone();
    const pc = new PhoneCall(p, "1002");
    expect((await pc.place({ extra })).status).toBe(100);
    const call = await nextCall();
    const seen = record(call);
    const { ok, dialog, acked } = await answered(pc, call);
    dialog.send("ACK");
    await acked;
    return { ok, dialog, seen };
  }

  it("answers the caller's Session-Expires in the 200 with the caller as refresher, and every UPDATE refresh with 200, three intervals running", async () => {
    const { ok, dialog, seen } = await establishedWith(TIMER);
    expect(ok.header("session-expires")).toBe("90;refresher=uac");
    expect(ok.header("require")).toBe("timer");
    expect(ok.header("allow")?.split(/,\s*/)).toContain("UPDATE");
    for (let refresh = 0; refresh < 3; refresh++) {
      const res = await dialog.request("UPDATE", { extra: ["Session-Expires: 90;refresher=uac", "Supported: timer"] });
      expect(res.status, `refresh ${refresh + 1}`).toBe(200);
      expect(res.header("session-expires")).toBe("90;refresher=uac");
      expect(res.header("contact")).toBeDefined();
    }
    // The call is still up after the refreshes: the phone's BYE ends it like any other.
    expect(seen).toEqual([]);
    expect((await dialog.request("BYE")).status).toBe(200);
    expect(seen).toEqual(["bye"]);
  });

  it("refuses an interval under Min-SE with 422 and Min-SE: 90, before ringing anyone", async () => {
    const p = await phone();
    const res = await new PhoneCall(p, "1002").place({ extra: ["Supported: timer", "Session-Expires: 30"] });
    expect(res.status).toBe(422);
    expect(res.header("min-se")).toBe("90");
  });

  it("turns the timer off rather than refresh itself when asked to be the refresher, and for a caller without timers", async () => {
    const asksUs = await establishedWith(["Supported: timer", "Session-Expires: 120;refresher=uas"]);
    expect(asksUs.ok.header("session-expires")).toBeUndefined();
    const plain = await establishedWith([]);
    expect(plain.ok.header("session-expires")).toBeUndefined();
    // An UPDATE with no timer is a plain keep-alive: 200.
    expect((await plain.dialog.request("UPDATE")).status).toBe(200);
  });

  it("answers an UPDATE carrying an offer 488, keeping the call", async () => {
    const { dialog, seen } = await establishedWith(TIMER);
    expect((await dialog.request("UPDATE", { body: TEST_SDP, contentType: "application/sdp" })).status).toBe(488);
    expect(seen).toEqual([]);
    expect((await dialog.request("OPTIONS")).status).toBe(200);
  });
});
