// Interop with the console's own user agent: sip.js in Node (its WebRTC media swapped for a
// handler of fixed SDP strings, so only signalling is under test) calls the server through the 407
// and is called by it, with ringing, answer, INFO DTMF, re-INVITE both ways, BYE, reject and CANCEL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import {
  Inviter,
  Registerer,
  RegistererState,
  SessionState,
  UserAgent,
  type BodyAndContentType,
  type Invitation,
  type Session,
  type SessionDescriptionHandler,
  type SessionDescriptionHandlerFactory,
  type UserAgentDelegate,
} from "sip.js";
import type { InboundCall, InfoDtmf, OutboundCall } from "../../server/sip/call-signalling.js";
import { TEST_SDP, type TestDevice } from "../helpers/sip-client.js";
import { CALLS_REALM, startSipServer, type SipTestServer } from "../helpers/sip-server.js";

const PHONE_SDP = TEST_SDP.replace("40000", "41000");
const SERVER_SDP = TEST_SDP.replace("40000", "50000");
const HOLD_SDP = SERVER_SDP.replace("sendrecv", "sendonly");

/** A session description handler that offers and answers a fixed SDP and keeps what it was given. */
class FixedSdp implements SessionDescriptionHandler {
  readonly remote: string[] = [];
  constructor(private readonly local: string) {}
  close(): void {}
  async getDescription(): Promise<BodyAndContentType> {
    return { body: this.local, contentType: "application/sdp" };
  }
  hasDescription(contentType: string): boolean {
    return contentType === "application/sdp";
  }
  async setDescription(sdp: string): Promise<void> {
    this.remote.push(sdp);
  }
  sendDtmf(): boolean {
    return false;
  }
}

const fixedSdp: SessionDescriptionHandlerFactory = () => new FixedSdp(PHONE_SDP);

function sdpOf(session: Session): FixedSdp {
  const handler = session.sessionDescriptionHandler;
  if (!(handler instanceof FixedSdp)) throw new Error("the session has no fixed-SDP handler");
  return handler;
}

let server: SipTestServer;
const globals = globalThis as { WebSocket?: unknown };
const nodeWebSocket = globals.WebSocket;
const agents: UserAgent[] = [];
const inbound: InboundCall[] = [];

beforeAll(async () => {
  server = await startSipServer();
  server.sip.calls.onInbound((call) => inbound.push(call));
  // sip.js's transport uses the browser's WebSocket, which Node 20 lacks.
  globals.WebSocket = WebSocket;
});
afterAll(async () => {
  await Promise.all(agents.map((ua) => ua.stop()));
  globals.WebSocket = nodeWebSocket;
  await server.close();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 150 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

/** A started sip.js user agent for a fresh device, set up as the console's phone is (pitfall 7). */
async function agent(delegate: UserAgentDelegate = {}): Promise<{ ua: UserAgent; device: TestDevice }> {
  const device = await server.device();
  const ua = new UserAgent({
    uri: UserAgent.makeURI(`sip:${device.username}@${CALLS_REALM}`),
    authorizationUsername: device.username,
    authorizationPassword: device.password,
    transportOptions: { server: `${server.url.replace(/^http/, "ws")}/sip` },
    sessionDescriptionHandlerFactory: fixedSdp,
    logConfiguration: false,
    logLevel: "error",
    delegate,
  });
  agents.push(ua);
  await ua.start();
  return { ua, device };
}

async function registeredAgent(invitations: Invitation[]): Promise<{ ua: UserAgent; device: TestDevice }> {
  const a = await agent({ onInvite: (invitation) => invitations.push(invitation) });
  const registerer = new Registerer(a.ua, { expires: 300 });
  await registerer.register();
  await until(() => registerer.state === RegistererState.Registered, "registered");
  return a;
}

function record(call: InboundCall | OutboundCall): string[] {
  const seen: string[] = [];
  call.on("bye", () => seen.push("bye"));
  call.on("dtmf", (d: InfoDtmf) => seen.push(`dtmf:${d.digit}:${d.durationMs ?? ""}`));
  return seen;
}

describe("sip.js calls the server", () => {
  it("gets through the 407, rings, is answered (answer() resolving on its ACK), sends INFO DTMF, holds, is re-INVITEd, hangs up", async () => {
    const { ua, device } = await agent();
    const target = UserAgent.makeURI(`sip:5001@${CALLS_REALM}`);
    if (!target) throw new Error("bad target");
    const inviter = new Inviter(ua, target);
    const progress: number[] = [];
    await inviter.invite({ requestDelegate: { onProgress: (response) => progress.push(response.message.statusCode ?? 0) } });
    await until(() => inbound.length === 1, "call handed to the engine");
    const call = inbound[0];
    if (!call) throw new Error("no call");
    const seen = record(call);
    expect(call.device.deviceId).toBe(device.id);
    expect(call.from.user).toBe(device.username);
    expect(call.dialled).toBe("5001");
    expect(call.offer).toBe(PHONE_SDP);

    call.ringing();
    await until(() => progress.includes(180), "180 at sip.js");
    await call.answer(SERVER_SDP);
    await until(() => inviter.state === SessionState.Established, "established");
    expect(sdpOf(inviter).remote).toEqual([SERVER_SDP]);

    await inviter.info({ requestOptions: { body: { contentDisposition: "render", contentType: "application/dtmf-relay", content: "Signal=5\r\nDuration=160" } } });
    await until(() => seen.length > 0, "dtmf");
    expect(seen).toEqual(["dtmf:5:160"]);

    const offers: string[] = [];
    call.on("reinvite", (offer, respond) => {
      offers.push(offer);
      respond.answer(HOLD_SDP);
    });
    let accepted = false;
    await inviter.invite({ requestDelegate: { onAccept: () => (accepted = true) } });
    await until(() => accepted, "re-INVITE accepted");
    expect(offers).toEqual([PHONE_SDP]);
    expect(sdpOf(inviter).remote).toEqual([SERVER_SDP, HOLD_SDP]);

    expect(await call.reinvite(HOLD_SDP)).toBe(PHONE_SDP);
    expect(sdpOf(inviter).remote).toEqual([SERVER_SDP, HOLD_SDP, HOLD_SDP]);

    await inviter.bye();
    await until(() => seen.includes("bye"), "bye");
    expect(inviter.state).toBe(SessionState.Terminated);
  });

  it("hears the server's BYE when the engine hangs up, and its CANCEL handled as 487", async () => {
    const { ua } = await agent();
    const target = UserAgent.makeURI(`sip:1003@${CALLS_REALM}`);
    if (!target) throw new Error("bad target");
    const before = inbound.length;
    const inviter = new Inviter(ua, target);
    await inviter.invite();
    await until(() => inbound.length === before + 1, "call handed to the engine");
    const call = inbound[before];
    if (!call) throw new Error("no call");
    await call.answer(SERVER_SDP);
    await until(() => inviter.state === SessionState.Established, "established");
    await call.hangup();
    await until(() => inviter.state === SessionState.Terminated, "terminated by the server's BYE");

    const cancelling = new Inviter(ua, target);
    await cancelling.invite();
    await until(() => inbound.length === before + 2, "second call");
    const second = inbound[before + 1];
    if (!second) throw new Error("no call");
    const events: string[] = [];
    second.on("cancel", () => events.push("cancel"));
    second.ringing();
    await new Promise((r) => setTimeout(r, 100));
    await cancelling.cancel();
    await until(() => events.length > 0, "cancel at the engine");
    await until(() => cancelling.state === SessionState.Terminated, "sip.js terminated");
  });
});

describe("the server calls sip.js", () => {
  it("rings it at its registered contact with the caller id, is answered, re-INVITEs it for hold, and hangs up", async () => {
    const invitations: Invitation[] = [];
    const { device } = await registeredAgent(invitations);
    const call = server.sip.calls.invite(
      { accountId: server.accountId, deviceId: device.id },
      { offer: SERVER_SDP, from: { user: "5001", display: "Sales" }, to: { user: device.username, display: "Agent" } },
    );
    if (!call) throw new Error("not registered");
    const seen = record(call);
    let ringing = false;
    let answer = "";
    call.on("ringing", () => (ringing = true));
    call.on("answered", (sdp) => (answer = sdp));
    await until(() => invitations.length === 1, "INVITE at sip.js");
    const invitation = invitations[0];
    if (!invitation) throw new Error("no invitation");
    expect(invitation.remoteIdentity.uri.user).toBe("5001");
    expect(invitation.remoteIdentity.displayName).toBe("Sales");
    await until(() => ringing, "ringing from sip.js's automatic 180");

    await invitation.accept();
    await until(() => answer !== "", "answered");
    expect(answer).toBe(PHONE_SDP);
    await until(() => invitation.state === SessionState.Established, "established at sip.js");
    expect(sdpOf(invitation).remote).toEqual([SERVER_SDP]);

    expect(await call.reinvite(HOLD_SDP)).toBe(PHONE_SDP);
    expect(sdpOf(invitation).remote).toEqual([SERVER_SDP, HOLD_SDP]);

    await call.hangup();
    await until(() => invitation.state === SessionState.Terminated, "terminated at sip.js");
    expect(seen).toEqual([]);
  });

  it("hears sip.js's BYE as `bye`, its reject as `rejected`, and CANCELs a ringing sip.js", async () => {
    const invitations: Invitation[] = [];
    const { device } = await registeredAgent(invitations);
    const target = { accountId: server.accountId, deviceId: device.id };
    const options = { offer: SERVER_SDP, from: { user: "5002" }, to: { user: device.username } };

    const first = server.sip.calls.invite(target, options);
    if (!first) throw new Error("not registered");
    const seen = record(first);
    await until(() => invitations.length === 1, "first INVITE");
    await invitations[0]?.accept();
    await until(() => invitations[0]?.state === SessionState.Established, "established");
    await invitations[0]?.bye();
    await until(() => seen.includes("bye"), "bye");

    const second = server.sip.calls.invite(target, options);
    if (!second) throw new Error("not registered");
    let rejected = 0;
    second.on("rejected", (code) => (rejected = code));
    await until(() => invitations.length === 2, "second INVITE");
    await invitations[1]?.reject({ statusCode: 486 });
    await until(() => rejected !== 0, "rejected");
    expect(rejected).toBe(486);

    const third = server.sip.calls.invite(target, options);
    if (!third) throw new Error("not registered");
    let ringing = false;
    third.on("ringing", () => (ringing = true));
    await until(() => invitations.length === 3, "third INVITE");
    await until(() => ringing, "ringing");
    third.cancel();
    await until(() => invitations[2]?.state === SessionState.Terminated, "cancelled at sip.js");
  });
});
