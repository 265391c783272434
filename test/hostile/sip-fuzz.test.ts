// Fuzzed SIP over a real WebSocket to the serve-mode server: thousands of mutations (fast-check,
// a fixed seed) of valid REGISTER, INVITE, OPTIONS, ACK, BYE, CANCEL, INFO, MESSAGE, SUBSCRIBE
// and a response: headers dropped, doubled, emptied, made huge or binary; start lines and
// Content-Length broken; messages truncated, re-lined, oversized; binary frames. Then INVITEs
// with the right digest (seed + 1) whose SDP, Content-Length and other headers are mutated, so the
// call engine gets them too. The server must never fail inside (no 500 Server Internal Error, no
// error in its log, no crash), must answer in order on every socket, and a phone must still
// register and place a call at the end.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorization, hex, PhoneCall, parseSipText, SipSocket, TEST_SDP, type SipMessage } from "../helpers/sip-client.js";
import { REALM, serveSip, type ServedSip } from "./sip-served.js";

const SEED = 1414;
const MUTATIONS = Number(process.env.SIP_FUZZ_RUNS ?? 3000);
/** Messages per socket before the sentinel: within a fresh socket's burst (40) even if all are malformed (5 each). */
const BATCH = 7;
/** Sockets at work side by side, each taking the next batch. */
const LANES = 4;

let sip: ServedSip;

beforeAll(async () => {
  sip = await serveSip();
}, 30_000);
afterAll(async () => {
  await sip?.stop();
});

/** Ids for the base messages from a counter, so the seed alone decides every byte of every case. */
let counter = 0;
const id = (bytes = 8): string => (++counter).toString(16).padStart(bytes * 2, "0");

function message(startLine: string, headers: string[], body = ""): string {
  return [startLine, ...headers, `Content-Length: ${Buffer.byteLength(body)}`, "", body].join("\r\n");
}

function common(method: string, cseq: number, to = `<sip:1003@${REALM}>`): string[] {
  return [
    `Via: SIP/2.0/WSS ${id(4)}.invalid;branch=z9hG4bK${id()}`,
    "Max-Forwards: 70",
    `To: ${to}`,
    `From: "Fuzz" <sip:fuzz@${REALM}>;tag=${id(4)}`,
    `Call-ID: ${id()}@fuzz.invalid`,
    `CSeq: ${cseq} ${method}`,
  ];
}

const contact = "Contact: <sip:fz@fz.invalid;transport=ws>;+sip.ice;reg-id=1";

/** Valid messages of every kind the server meets, fresh ids each time. */
const BASES: (() => string)[] = [
  () => message(`REGISTER sip:${REALM} SIP/2.0`, [...common("REGISTER", 1, `<sip:fuzz@${REALM}>`), contact, "Expires: 300"]),
  () => message(`INVITE sip:1003@${REALM} SIP/2.0`, [...common("INVITE", 1), contact, "Content-Type: application/sdp", "Allow: INVITE, ACK, CANCEL, BYE, INFO"], TEST_SDP),
  () => message(`OPTIONS sip:${REALM} SIP/2.0`, [...common("OPTIONS", 7, `<sip:${REALM}>`), "Accept: application/sdp"]),
  () => message(`ACK sip:1003@${REALM} SIP/2.0`, common("ACK", 1)),
  () => message(`BYE sip:1003@${REALM} SIP/2.0`, [...common("BYE", 2).map((h) => (h.startsWith("To:") ? `${h};tag=${id(4)}` : h))]),
  () => message(`CANCEL sip:1003@${REALM} SIP/2.0`, common("CANCEL", 1)),
  () => message(`INFO sip:1003@${REALM} SIP/2.0`, [...common("INFO", 3), "Content-Type: application/dtmf-relay"], "Signal=5\r\nDuration=160\r\n"),
  () => message(`MESSAGE sip:1003@${REALM} SIP/2.0`, [...common("MESSAGE", 1), "Content-Type: text/plain"], "hello"),
  () => message(`SUBSCRIBE sip:1003@${REALM} SIP/2.0`, [...common("SUBSCRIBE", 1), contact, "Event: presence", "Expires: 600"]),
  () => message("SIP/2.0 200 OK", [...common("INVITE", 1).map((h) => (h.startsWith("To:") ? `${h};tag=${id(4)}` : h)), contact, "Content-Type: application/sdp"], TEST_SDP),
];

const HEADER_VALUES = fc.oneof(
  fc.constant(""),
  fc.constant("x".repeat(20_000)),
  fc.constant("99999999999999999999999"),
  fc.constant("-1"),
  fc.constant("<sip:@>;;;=;tag="),
  fc.constant('"unterminated <sip:a@b>'),
  fc.constant("\u0000\u0001\u007f\uffff"),
  fc.constant("Digest username=, realm"),
  fc.string({ maxLength: 60 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
);

type Mutation =
  | { kind: "drop"; line: number }
  | { kind: "double"; line: number }
  | { kind: "value"; line: number; value: string }
  | { kind: "name"; line: number; name: string }
  | { kind: "start"; value: string }
  | { kind: "length"; value: string }
  | { kind: "truncate"; at: number }
  | { kind: "insert"; at: number; text: string }
  | { kind: "lf" }
  | { kind: "noBlank" }
  | { kind: "fold"; line: number }
  | { kind: "headers"; count: number }
  | { kind: "body"; text: string }
  | { kind: "oversize" };

const MUTATION: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("drop" as const), line: fc.nat(20) }),
  fc.record({ kind: fc.constant("double" as const), line: fc.nat(20) }),
  fc.record({ kind: fc.constant("value" as const), line: fc.nat(20), value: HEADER_VALUES }),
  fc.record({ kind: fc.constant("name" as const), line: fc.nat(20), name: fc.constantFrom("v", "f", "t", "i", "m", "l", "c", "X Bad", "", "CSEQ", "Via ", ":") }),
  fc.record({
    kind: fc.constant("start" as const),
    value: fc.oneof(
      fc.constantFrom("INVITE sip:1003@x SIP/3.0", "INVITE  SIP/2.0", "SIP/2.0 999 Nope", "SIP/2.0 20 OK", "REGISTER sip: SIP/2.0", "invite sip:a@b SIP/2.0", "OPTIONS <sip:x> SIP/2.0", ""),
      fc.string({ maxLength: 40 }),
    ),
  }),
  fc.record({ kind: fc.constant("length" as const), value: fc.constantFrom("-5", "0", "1", "999999999", "abc", "", "12 34", "4294967296") }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat(600) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(600), text: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom("\r\n", "\r\n\r\n", "\u0000", ":", ";", "<", '"')) }),
  fc.constant({ kind: "lf" as const }),
  fc.constant({ kind: "noBlank" as const }),
  fc.record({ kind: fc.constant("fold" as const), line: fc.nat(20) }),
  fc.record({ kind: fc.constant("headers" as const), count: fc.integer({ min: 100, max: 400 }) }),
  fc.record({ kind: fc.constant("body" as const), text: fc.oneof(fc.string({ maxLength: 200 }), fc.constant("v=0\r\nm=audio 0 RTP/AVP\r\n"), fc.constant("m=".repeat(500))) }),
  fc.constant({ kind: "oversize" as const }),
);

/** One fuzz case: a base message and 1-3 mutations, or a binary frame. */
const CASE = fc.oneof(
  { weight: 19, arbitrary: fc.record({ base: fc.nat(BASES.length - 1), mutations: fc.array(MUTATION, { minLength: 1, maxLength: 3 }) }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 300 }).map((bytes) => ({ binary: bytes })) },
);

function apply(text: string, m: Mutation): string {
  const split = text.indexOf("\r\n\r\n");
  const head = split === -1 ? text : text.slice(0, split);
  const body = split === -1 ? "" : text.slice(split + 4);
  const lines = head.split("\r\n");
  const at = (line: number) => 1 + (line % Math.max(1, lines.length - 1));
  const join = () => `${lines.join("\r\n")}\r\n\r\n${body}`;
  switch (m.kind) {
    case "drop":
      lines.splice(at(m.line), 1);
      return join();
    case "double":
      lines.splice(at(m.line), 0, lines[at(m.line)] ?? "");
      return join();
    case "value": {
      const i = at(m.line);
      const line = lines[i] ?? "";
      lines[i] = `${line.slice(0, Math.max(0, line.indexOf(":")))}: ${m.value}`;
      return join();
    }
    case "name": {
      const i = at(m.line);
      const line = lines[i] ?? "";
      lines[i] = `${m.name}${line.slice(line.indexOf(":"))}`;
      return join();
    }
    case "start":
      lines[0] = m.value;
      return join();
    case "length":
      return join().replace(/Content-Length: \d+/, `Content-Length: ${m.value}`);
    case "truncate":
      return text.slice(0, m.at % (text.length + 1));
    case "insert": {
      const i = m.at % (text.length + 1);
      return `${text.slice(0, i)}${m.text}${text.slice(i)}`;
    }
    case "lf":
      return text.replace(/\r\n/g, "\n");
    case "noBlank":
      return text.replace("\r\n\r\n", "\r\n");
    case "fold": {
      const i = at(m.line);
      const line = lines[i] ?? "";
      const cut = Math.max(line.indexOf(":") + 2, Math.floor(line.length / 2));
      lines[i] = `${line.slice(0, cut)}\r\n\t${line.slice(cut)}`;
      return join();
    }
    case "headers":
      lines.splice(1, 0, ...Array.from({ length: m.count }, (_, i) => `X-Fuzz-${i}: ${i}`));
      return join();
    case "body":
      return `${lines.join("\r\n")}\r\n\r\n${m.text}`;
    case "oversize":
      lines.splice(1, 0, `X-Pad: ${"p".repeat(70 * 1024)}`);
      return join();
  }
}

const cases = fc.sample(CASE, { seed: SEED, numRuns: MUTATIONS }).map((c) =>
  "binary" in c ? Buffer.from(c.binary) : c.mutations.reduce((text, m) => apply(text, m), (BASES[c.base] ?? BASES[0] ?? (() => ""))()),
);

/** Authenticated INVITEs: mutations that leave the request line and the digest mostly whole. */
const AUTHENTICATED = Number(process.env.SIP_FUZZ_AUTH_RUNS ?? 150);
const SDP_LINE = fc.constantFrom("m=audio 0 RTP/AVP", "m=video 9 UDP/TLS/RTP/SAVPF 96", "c=IN IP6 ::1", "a=rtpmap:0", "a=sendonly", "a=fingerprint:sha-256 zz", "m=audio 99999 RTP/AVP 0", "o=", "v=1", "a=rtpmap:101 telephone-event/48000");
const AUTHENTICATED_MUTATION: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("body" as const), text: fc.array(SDP_LINE, { maxLength: 6 }).map((lines) => `${TEST_SDP}${lines.join("\r\n")}\r\n`) }),
  fc.record({ kind: fc.constant("body" as const), text: fc.oneof(fc.constant(""), fc.string({ maxLength: 300 }), fc.constant(TEST_SDP.replace(/\r\n/g, "\n"))) }),
  fc.record({ kind: fc.constant("length" as const), value: fc.constantFrom("0", "1", "999999", "abc") }),
  fc.record({ kind: fc.constant("value" as const), line: fc.constantFrom(2, 8, 9, 10), value: HEADER_VALUES }),
  fc.record({ kind: fc.constant("double" as const), line: fc.nat(12) }),
  fc.record({ kind: fc.constant("headers" as const), count: fc.integer({ min: 1, max: 140 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(900), text: fc.constantFrom("\r\n", ";", "\u0000", "Require: 100rel\r\n", "Supported: timer\r\n") }),
);
const authenticatedCases = fc.sample(fc.array(AUTHENTICATED_MUTATION, { minLength: 1, maxLength: 3 }), { seed: SEED + 1, numRuns: AUTHENTICATED });

function sentinel(): { text: string; callId: string } {
  const callId = `sentinel-${hex()}`;
  const text = message(`OPTIONS sip:${REALM} SIP/2.0`, [
    `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=z9hG4bK${hex()}`,
    "Max-Forwards: 70",
    `To: <sip:${REALM}>`,
    `From: <sip:probe@${REALM}>;tag=${hex(4)}`,
    `Call-ID: ${callId}`,
    "CSeq: 1 OPTIONS",
  ]);
  return { text, callId };
}

/** Sends a batch then the sentinel; everything the server sent back before the sentinel's 200. */
async function batch(socket: SipSocket, messages: (string | Buffer)[]): Promise<SipMessage[]> {
  for (const m of messages) socket.send(m);
  const probe = sentinel();
  socket.send(probe.text);
  const got: SipMessage[] = [];
  for (;;) {
    const reply = parseSipText(await socket.nextText(10_000));
    if (reply.header("call-id") === probe.callId) {
      expect(reply.status).toBe(200);
      return got;
    }
    got.push(reply);
  }
}

describe(`${MUTATIONS} mutations of SIP messages (seed ${SEED})`, () => {
  it("get only proper answers, in order, with no failure inside the server", async () => {
    const statuses = new Map<number, number>();
    let requestsFromServer = 0;
    const answers: { first: number; replies: SipMessage[] }[] = [];
    let next = 0;
    const lane = async () => {
      while (next < cases.length) {
        const first = next;
        next += BATCH;
        const socket = await SipSocket.connect(sip.url);
        answers.push({ first, replies: await batch(socket, cases.slice(first, first + BATCH)) });
        await socket.close();
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
    for (const { first: i, replies } of answers) {
      for (const r of replies) {
        if (r.text === "\r\n") continue;
        if (r.status === undefined) {
          // A request the server sent on its own: an INVITE's fork never goes to a socket that
          // registered nothing, so only a CRLF pong or nothing at all may come here.
          requestsFromServer++;
          continue;
        }
        statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        expect(r.startLine, `case ${i}..${i + BATCH - 1}`).not.toBe("SIP/2.0 500 Server Internal Error");
        expect(r.status >= 100 && r.status < 700, r.startLine).toBe(true);
      }
    }
    expect(requestsFromServer).toBe(0);
    // The fuzz reached more than the parser: challenges, refusals and routing answered too.
    for (const status of [400, 401, 407, 481, 501, 513]) expect(statuses.get(status) ?? 0, `status ${status}`).toBeGreaterThan(0);
    // Nothing logged as an error (pino's 50) or worse: every failure inside is logged so.
    const errors = sip.served.output().split("\n").filter((line) => /"level":(50|60)/.test(line));
    expect(errors).toEqual([]);
    // A fixed amount of work (27 s in a quiet CI); the default 60 s ran out at load 16 (fresh44).
  }, 180_000);

  it(`past the digest too: ${AUTHENTICATED} INVITEs with the right credentials and mutated bodies and headers`, async () => {
    const caller = await sip.device();
    const statuses = new Map<number, number>();
    let next = 0;
    const lane = async () => {
      while (next < authenticatedCases.length) {
        const index = next++;
        const mutations = authenticatedCases[index] ?? [];
        const call = new PhoneCall(await sip.phone(caller), "1003");
        const socket = call.phone.socket;
        socket.send(call.inviteText());
        const challenge = await socket.next(10_000);
        expect(challenge.status).toBe(407);
        socket.send(call.ackFailureText(challenge));
        const proxyAuthorization = authorization({
          ...call.phone.options,
          method: "INVITE",
          uri: call.uri,
          challenge: challenge.header("proxy-authenticate") ?? "",
        });
        const invite = mutations.reduce((text, m) => apply(text, m), call.inviteText({ proxyAuthorization }));
        for (const r of await batch(socket, [invite])) {
          if (r.status === undefined) continue;
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          expect(r.startLine, `authenticated case ${index}`).not.toBe("SIP/2.0 500 Server Internal Error");
        }
        // Closing the socket ends whatever call the INVITE started.
        await socket.close();
      }
    };
    await Promise.all(Array.from({ length: LANES }, lane));
    // Some got through to the call engine (100 Trying), some were refused on their merits.
    expect(statuses.get(100) ?? 0).toBeGreaterThan(0);
    expect([...statuses.keys()].some((status) => status >= 400 && status < 500)).toBe(true);
    const errors = sip.served.output().split("\n").filter((line) => /"level":(50|60)/.test(line));
    expect(errors).toEqual([]);
  });

  it("leave a server where a phone still registers and places a call", async () => {
    const device = await sip.device();
    const phone = await sip.phone(device);
    expect((await phone.register({ expires: 300 })).status).toBe(200);
    const call = new PhoneCall(phone, "1003");
    expect((await call.place()).status).toBe(100);
    expect(await sip.registered()).toContain(device.id);
  });
});
