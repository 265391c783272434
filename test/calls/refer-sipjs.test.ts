// A phone's own transfer key over real SIP: sip.js user agents in Node, registered as the demo
// users' softphones on a real server over /sip, their media werift legs of the test's own media
// engine (so the audio is real), transfer by REFER (RFC 3515) as the console's sip.js would:
// blind (Session.refer(uri)) and attended (Session.refer(otherSession), Replaces), each with its
// 202, its NOTIFYs (message/sipfrag), the channels, events and CDRs the channels API's transfers
// leave; and the refusals, which change nothing. On a server without REFER each REFER gets 501.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionState, type Core, type Notification, type Session } from "sip.js";
import type { BusEvent } from "../../server/events/bus.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { hex, parseSipText, SipSocket } from "../helpers/sip-client.js";
import { callIdOf, DEMO_REALM as REALM, demoUri as uri, SipjsPhones, until } from "../helpers/sipjs-phones.js";

// Each party says its own tone, none a harmonic of another.
const PARTY = 1300;
const TRANSFEROR = 1700;
const TARGET = 2300;

let api: TestApi;
let phones: SipjsPhones;
let token = "";
let accountId = "";
const events: BusEvent[] = [];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
  api.server.events.bus.subscribe((event) => events.push(event));
  phones = new SipjsPhones(api, accountId);
});
afterAll(async () => {
  await phones?.close();
  await api?.close();
});

const phone = (username: string) => phones.phone(username);
const call = (...args: Parameters<SipjsPhones["call"]>) => phones.call(...args);

async function talking(a: Session, aSays: number, b: Session, bSays: number): Promise<void> {
  const [atA, atB] = await phones.talking(a, aSays, b, bSays);
  expect(atA, `the one saying ${aSays} Hz hears ${bSays} Hz`).toBeGreaterThan(0.9);
  expect(atB, `the one saying ${bSays} Hz hears ${aSays} Hz`).toBeGreaterThan(0.9);
}

interface ChannelRow {
  uuid: string;
  other_leg?: string;
  authorizing_id: string;
}

async function channels(): Promise<ChannelRow[]> {
  const res = await api.call<ChannelRow[]>("GET", `/v2/accounts/${accountId}/channels`, { token });
  expect(res.status).toBe(200);
  return res.body.data;
}

/** Which of these legs are live, each with its other leg, sorted: for comparing before and after. */
async function pairs(ids: string[]): Promise<Record<string, string | undefined>> {
  return Object.fromEntries((await channels()).filter((c) => ids.includes(c.uuid)).map((c) => [c.uuid, c.other_leg]).sort());
}

function destroyed(callId: string): Record<string, unknown> | undefined {
  return events.find((e) => e.routing_key === `call.CHANNEL_DESTROY.${callId}`)?.data;
}

async function cdrOf(callId: string): Promise<Record<string, unknown>> {
  let found: Record<string, unknown> | undefined;
  for (let i = 0; i < 100 && !found; i++) {
    const res = await api.call<Record<string, unknown>[]>("GET", `/v2/accounts/${accountId}/cdrs`, { token, query: { page_size: "100" } });
    found = res.body.data.find((row) => row.call_id === callId);
    if (!found) await sleep(50);
  }
  if (!found) throw new Error(`no CDR for ${callId}`);
  return found;
}

/** What a REFER brought back: its final response and the NOTIFYs of its subscription. */
interface ReferOutcome {
  status: number;
  reason: string;
  notifies: { body: string; state: string; event: string }[];
}

function referWatch(): { outcome: ReferOutcome; delegate: Core.OutgoingRequestDelegate; onNotify: (n: Notification) => void } {
  const outcome: ReferOutcome = { status: 0, reason: "", notifies: [] };
  const final = (response: Core.IncomingResponse): void => {
    outcome.status = response.message.statusCode ?? 0;
    outcome.reason = response.message.reasonPhrase ?? "";
  };
  return {
    outcome,
    delegate: { onAccept: final, onReject: final },
    onNotify: (notification) => {
      const request = notification.request;
      outcome.notifies.push({ body: request.body.trim(), state: request.getHeader("Subscription-State") ?? "", event: request.getHeader("Event") ?? "" });
      void notification.accept();
    },
  };
}

/** Sends a REFER in the session's dialog as sip.js writes it, with these headers instead of its Refer-To. */
async function rawRefer(session: Session, extraHeaders: string[]): Promise<ReferOutcome> {
  const watch = referWatch();
  await session._refer(watch.onNotify, watch.delegate, { extraHeaders });
  await until(() => watch.outcome.status !== 0, "the REFER's final response");
  return watch.outcome;
}

describe("blind transfer by REFER", () => {
  it("202, NOTIFY 100 Trying then 200 OK (terminated), the party rings the target, the transferor's leg ends BLIND_TRANSFER", async () => {
    const [admin, agent1, agent2] = [await phone("admin"), await phone("agent1"), await phone("agent2")];
    const first = await call(admin, "1002", agent1, [PARTY, TRANSFEROR]);
    const partyId = callIdOf(first.out);
    const transferorId = callIdOf(first.in);
    await talking(first.out, PARTY, first.in, TRANSFEROR);

    const watch = referWatch();
    const offered = agent2.invitations.length;
    await first.in.refer(uri("1003"), { requestDelegate: watch.delegate, onNotify: watch.onNotify });
    await until(() => watch.outcome.notifies.length === 2, "two NOTIFYs");
    expect(watch.outcome.status).toBe(202);
    expect(watch.outcome.notifies.map((n) => [n.body, n.state])).toEqual([
      ["SIP/2.0 100 Trying", "active;expires=60"],
      ["SIP/2.0 200 OK", "terminated;reason=noresource"],
    ]);
    // RFC 3515 §2.4.6: the id is the REFER's CSeq (JsSIP matches its subscriber by it).
    for (const n of watch.outcome.notifies) expect(n.event).toMatch(/^refer;id=\d+$/);
    // The server releases the transferor's leg after the final NOTIFY, as FreeSWITCH does.
    await until(() => first.in.state === SessionState.Terminated, "the transferor's call ended by the server");
    expect(destroyed(transferorId)).toMatchObject({ hangup_cause: "BLIND_TRANSFER" });

    // The party rings agent2 with its own caller id, exactly as the API's blind transfer.
    const second = await phones.answer(agent2, offered);
    expect(second.remoteIdentity.uri.user).toBe("1001");
    await phones.say(second, TARGET);
    await talking(first.out, PARTY, second, TARGET);
    const targetId = callIdOf(second);
    const rows = await channels();
    expect(rows.map((r) => r.uuid).sort()).toEqual([partyId, targetId].sort());
    expect(rows.find((r) => r.uuid === partyId)?.other_leg).toBe(targetId);
    // The party's leg was unbridged from the transferor and bridged to the target, as the API's transfer does.
    const partyEvents = events.filter((e) => e.routing_key.endsWith(`.${partyId}`)).map((e) => e.name);
    expect(partyEvents).toEqual(["CHANNEL_CREATE", "CHANNEL_PROGRESS", "CHANNEL_ANSWER", "CHANNEL_BRIDGE", "CHANNEL_UNBRIDGE", "CHANNEL_BRIDGE"]);

    await second.bye();
    await until(() => first.out.state === SessionState.Terminated, "the party hung up with the target");
    const [partyCdr, transferorCdr, targetCdr] = [await cdrOf(partyId), await cdrOf(transferorId), await cdrOf(targetId)];
    expect(transferorCdr).toMatchObject({ hangup_cause: "BLIND_TRANSFER" });
    expect(partyCdr.interaction_id).toBeDefined();
    expect(transferorCdr.interaction_id).toBe(partyCdr.interaction_id);
    expect(targetCdr.interaction_id).toBe(partyCdr.interaction_id);
  });
});

describe("attended transfer by REFER with Replaces", () => {
  it("joins the party and the consulted target, both of the transferor's legs ending ATTENDED_TRANSFER", async () => {
    const [admin, agent1, agent2] = [await phone("admin"), await phone("agent1"), await phone("agent2")];
    const first = await call(admin, "1002", agent1, [PARTY, TRANSFEROR]);
    // agent1 consults agent2 on a second call of its own.
    const consult = await call(agent1, "1003", agent2, [TRANSFEROR, TARGET]);
    await talking(consult.out, TRANSFEROR, consult.in, TARGET);
    const partyId = callIdOf(first.out);
    const lineId = callIdOf(first.in);
    const consultId = callIdOf(consult.out);
    const targetId = callIdOf(consult.in);

    const watch = referWatch();
    await first.in.refer(consult.out, { requestDelegate: watch.delegate, onNotify: watch.onNotify });
    await until(() => watch.outcome.notifies.length === 2, "two NOTIFYs");
    expect(watch.outcome.status).toBe(202);
    expect(watch.outcome.notifies.map((n) => [n.body, n.state])).toEqual([
      ["SIP/2.0 100 Trying", "active;expires=60"],
      ["SIP/2.0 200 OK", "terminated;reason=noresource"],
    ]);
    await until(() => first.in.state === SessionState.Terminated && consult.out.state === SessionState.Terminated, "both of agent1's calls ended by the server");
    expect(destroyed(lineId)).toMatchObject({ hangup_cause: "ATTENDED_TRANSFER" });
    expect(destroyed(consultId)).toMatchObject({ hangup_cause: "ATTENDED_TRANSFER" });

    await talking(first.out, PARTY, consult.in, TARGET);
    expect(await pairs([partyId, lineId, consultId, targetId])).toEqual(Object.fromEntries([[partyId, targetId], [targetId, partyId]].sort()));
    // Each is told whom it now talks with, as the API's completed attended transfer tells them.
    const update = events.find((e) => e.routing_key === `call.CALL_UPDATE.${targetId}`)?.data;
    expect(update).toMatchObject({ caller_id_number: "1001" });

    await first.out.bye();
    await until(() => consult.in.state === SessionState.Terminated, "the target hung up with the party");
    const [partyCdr, lineCdr, consultCdr, targetCdr] = [await cdrOf(partyId), await cdrOf(lineId), await cdrOf(consultId), await cdrOf(targetId)];
    expect(lineCdr).toMatchObject({ hangup_cause: "ATTENDED_TRANSFER" });
    expect(consultCdr).toMatchObject({ hangup_cause: "ATTENDED_TRANSFER" });
    expect(targetCdr.interaction_id).toBe(partyCdr.interaction_id);
  });
});

describe("a queue call handed on by the agent's phone", () => {
  it("a caller from the Sales queue, consulted to a colleague and joined by REFER with Replaces: the agent goes to wrap-up", async () => {
    const [agent1, agent2] = [await phone("agent1"), await phone("agent2")];
    const users = (await api.server.store.account(accountId, "users")).all();
    const agent1Id = users.find((u) => u.data.username === "agent1")?.id ?? "";
    await api.server.callq.recipientAction(accountId, agent1Id, "login_ready");
    const offered = agent1.invitations.length;
    const sim = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      token,
      data: { to: "5001", caller_id_name: "Casey Customer", caller_id_number: "+14155550100", audio: `tone_stream://${PARTY}` },
    });
    expect(sim.status).toBeLessThan(300);
    const offer = await phones.answer(agent1, offered);
    await phones.say(offer, TRANSFEROR);
    const lineId = callIdOf(offer);
    const callerId = (await channels()).find((c) => c.uuid === lineId)?.other_leg ?? "";
    expect(callerId).not.toBe("");
    expect(await phones.hears(offer, PARTY)).toBeGreaterThan(0.9);

    const consult = await call(agent1, "1003", agent2, [TRANSFEROR, TARGET]);
    const watch = referWatch();
    await offer.refer(consult.out, { requestDelegate: watch.delegate, onNotify: watch.onNotify });
    await until(() => watch.outcome.notifies.length === 2, "two NOTIFYs");
    expect(watch.outcome.notifies.map((n) => n.body)).toEqual(["SIP/2.0 100 Trying", "SIP/2.0 200 OK"]);
    await until(() => offer.state === SessionState.Terminated && consult.out.state === SessionState.Terminated, "both of agent1's calls ended");

    // The queue's caller now talks with agent2; the queue call is over for agent1.
    const targetId = callIdOf(consult.in);
    expect(await pairs([callerId, targetId, lineId, callIdOf(consult.out)])).toEqual(Object.fromEntries([[callerId, targetId], [targetId, callerId]].sort()));
    expect(await phones.hears(consult.in, PARTY)).toBeGreaterThan(0.9);
    const deadline = Date.now() + 10_000;
    let state = "";
    while (state !== "Wrapup-Time" && Date.now() < deadline) {
      state = (await api.server.callq.recipientStatus(accountId, agent1Id)).availability_state;
      if (state !== "Wrapup-Time") await sleep(50);
    }
    expect(state).toBe("Wrapup-Time");
    await api.server.callq.recipientAction(accountId, agent1Id, "logout");

    await consult.in.bye();
    await until(() => events.some((e) => e.routing_key === `call.CHANNEL_DESTROY.${callerId}`), "the caller's leg ended");
    expect(destroyed(lineId)).toMatchObject({ hangup_cause: "ATTENDED_TRANSFER" });
  });
});

describe("a REFER while the API transfers the call", () => {
  it("is refused 491 during an attended transfer the console started, which goes on as before", async () => {
    const [admin, agent1, agent3] = [await phone("admin"), await phone("agent1"), await phone("agent3")];
    const first = await call(admin, "1002", agent1, [PARTY, TRANSFEROR]);
    const lineId = callIdOf(first.in);
    const ringing = agent3.invitations.length;
    const started = await api.call("POST", `/v2/accounts/${accountId}/channels/${lineId}`, { token, data: { action: "transfer", target: "1004", "transfer-type": "attended" } });
    expect(started.status).toBe(202);
    const consult = await phones.answer(agent3, ringing);
    await phones.say(consult, TARGET);

    const watch = referWatch();
    await first.in.refer(uri("1003"), { requestDelegate: watch.delegate, onNotify: watch.onNotify });
    await until(() => watch.outcome.status !== 0, "the REFER's final response");
    expect([watch.outcome.status, watch.outcome.reason, watch.outcome.notifies]).toEqual([491, "Transfer In Progress", []]);

    // The console's consultation goes on: agent1 talks with agent3, admin waits; agent1 hanging up completes it.
    await talking(first.in, TRANSFEROR, consult, TARGET);
    await first.in.bye();
    await talking(first.out, PARTY, consult, TARGET);
    await first.out.bye();
    await until(() => consult.state === SessionState.Terminated, "the calls ended");
  });
});

describe("refused REFERs change nothing", () => {
  it("an unknown target (404), no Refer-To (400), a Replaces naming another user's call (403), a REFER outside a call (403)", async () => {
    const [admin, agent1, agent2, agent3] = [await phone("admin"), await phone("agent1"), await phone("agent2"), await phone("agent3")];
    const first = await call(admin, "1002", agent1, [PARTY, TRANSFEROR]);
    // A call agent1 is not in: agent2 with agent3.
    const others = await call(agent2, "1004", agent3, [TARGET, TRANSFEROR]);
    const legs = [first.out, first.in, others.out, others.in].map(callIdOf);
    const before = await pairs(legs);
    expect(Object.keys(before)).toHaveLength(4);

    const unknown = referWatch();
    await first.in.refer(uri("7777"), { requestDelegate: unknown.delegate, onNotify: unknown.onNotify });
    await until(() => unknown.outcome.status !== 0, "the REFER's final response");
    expect([unknown.outcome.status, unknown.outcome.reason]).toEqual([404, "No Such Transfer Target"]);

    expect(await rawRefer(first.in, [`Referred-By: <sip:agent1@${REALM}>`])).toMatchObject({ status: 400, reason: "Missing Refer-To" });

    const dialog = others.in.dialog;
    if (!dialog) throw new Error("no dialog");
    // agent3's dialog with the server, named as sip.js names a dialog to replace: to-tag the server's, from-tag the phone's.
    const replaces = encodeURIComponent(`${dialog.callId};to-tag=${dialog.remoteTag};from-tag=${dialog.localTag}`);
    expect(await rawRefer(first.in, [`Refer-To: <sip:1004@${REALM}?Replaces=${replaces}>`])).toMatchObject({ status: 403, reason: "Replaces Names No Call Of Yours" });
    // A Replaces naming no dialog at all is refused by the SIP layer itself.
    const none = encodeURIComponent(`${hex()};to-tag=${hex(4)};from-tag=${hex(4)}`);
    expect(await rawRefer(first.in, [`Refer-To: <sip:1004@${REALM}?Replaces=${none}>`])).toMatchObject({ status: 403, reason: "Replaces Names No Other Call" });
    expect(await rawRefer(first.in, [`Refer-To: <http://example.com/>`])).toMatchObject({ status: 416 });

    // Nothing moved: the same four legs, bridged as before, still talking.
    expect(await pairs(legs)).toEqual(before);
    for (const session of [first.out, first.in, others.out, others.in]) expect(session.state).toBe(SessionState.Established);
    await talking(first.out, PARTY, first.in, TRANSFEROR);

    // The SIP layer's own refusals, from a socket of its own: outside a dialog, and in agent1's
    // dialog but not over agent1's connection (a device not in the call). Neither moves anything.
    const socket = await SipSocket.connect(api.url);
    try {
      const line = first.in.dialog;
      if (!line) throw new Error("no dialog");
      const refer = (callId: string, toTag: string | null, fromTag: string): string =>
        [
          `REFER sip:switchboard@${REALM} SIP/2.0`,
          `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=z9hG4bK${hex()}`,
          "Max-Forwards: 70",
          `To: <sip:switchboard@${REALM}>${toTag ? `;tag=${toTag}` : ""}`,
          `From: <sip:intruder@${REALM}>;tag=${fromTag}`,
          `Call-ID: ${callId}`,
          "CSeq: 9000 REFER",
          `Contact: <sip:intruder@${hex(4)}.invalid;transport=ws>`,
          `Refer-To: <sip:1003@${REALM}>`,
          "Content-Length: 0",
          "",
          "",
        ].join("\r\n");
      socket.send(refer(`${hex()}@test.invalid`, null, hex(4)));
      const outside = await socket.next();
      expect([outside.status, outside.startLine]).toEqual([403, "SIP/2.0 403 REFER Outside A Call"]);
      socket.send(refer(line.callId, line.remoteTag, line.localTag));
      const intruder = await socket.next();
      expect([intruder.status, intruder.startLine]).toEqual([403, "SIP/2.0 403 Not Your Call"]);

      // And REFER is in the Allow list now that it works.
      socket.send(
        [
          `OPTIONS sip:${REALM} SIP/2.0`,
          `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=z9hG4bK${hex()}`,
          "Max-Forwards: 70",
          `To: <sip:${REALM}>`,
          `From: <sip:intruder@${REALM}>;tag=${hex(4)}`,
          `Call-ID: ${hex()}@test.invalid`,
          "CSeq: 1 OPTIONS",
          "Content-Length: 0",
          "",
          "",
        ].join("\r\n"),
      );
      const options = parseSipText(await socket.nextText());
      expect((options.header("allow") ?? "").split(/,\s*/)).toContain("REFER");
    } finally {
      await socket.close();
    }
    expect(await pairs(legs)).toEqual(before);

    // agent1's own requests still go through in its dialog (the intruder's CSeq was never taken).
    for (const session of [first.in, others.out]) await session.bye();
    await until(() => [first.out, others.in].every((s) => s.state === SessionState.Terminated), "the calls ended");
  });
});
