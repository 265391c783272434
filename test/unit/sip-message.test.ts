// The message wrapper around sip.js's parser: what it accepts, what it calls malformed and why,
// `Contact: *`, and responses that copy the request's headers.
import { describe, expect, it } from "vitest";
import { buildResponse, contactsOf, hasTag, parseSip, readRaw } from "../../server/sip/message.js";

const request = (lines: string[]) => [...lines, "Content-Length: 0", "", ""].join("\r\n");
const REGISTER = [
  "REGISTER sip:demo.switchboard.local SIP/2.0",
  "Via: SIP/2.0/WSS a.invalid;branch=z9hG4bK1",
  "v: SIP/2.0/WS b.invalid;branch=z9hG4bK2",
  "To: <sip:agent1@demo.switchboard.local>",
  "f: <sip:agent1@demo.switchboard.local>;tag=abc",
  "i: call-1",
  "CSeq: 3 REGISTER",
];

describe("parseSip", () => {
  it("parses a request, compact header names included", () => {
    const parsed = parseSip(request([...REGISTER, "Contact: <sip:x@y.invalid;transport=ws>;expires=120"]));
    expect(parsed.kind).toBe("request");
    if (parsed.kind !== "request") return;
    expect(parsed.method).toBe("REGISTER");
    expect(parsed.uri.host).toBe("demo.switchboard.local");
    expect(parsed.message.callId).toBe("call-1");
    expect(parsed.contactStar).toBe(false);
    expect(contactsOf(parsed).map((c) => [c.uri.toString(), c.getParam("expires")])).toEqual([["sip:x@y.invalid;transport=ws", "120"]]);
  });

  it("accepts Contact: *, which sip.js's grammar alone rejects", () => {
    const parsed = parseSip(request([...REGISTER, "Contact: *", "Expires: 0"]));
    expect(parsed.kind === "request" && parsed.contactStar).toBe(true);
  });

  it("parses a response with its branch and CSeq", () => {
    const parsed = parseSip(request(["SIP/2.0 200 OK", "Via: SIP/2.0/WS s.invalid;branch=z9hG4bKq", "To: <sip:a@b>;tag=1", "From: <sip:a@b>;tag=2", "Call-ID: c", "CSeq: 4 NOTIFY"]));
    expect(parsed).toMatchObject({ kind: "response", status: 200, method: "NOTIFY", cseq: 4, branch: "z9hG4bKq" });
    expect(parsed.kind === "response" && parsed.message.toTag).toBe("1");
  });

  it("names what is wrong, keeping a request's headers for the 400", () => {
    const cases: [string, string][] = [
      [request(REGISTER.filter((l) => !l.startsWith("i:"))), "Missing Call-ID"],
      [request(REGISTER.map((l) => (l.startsWith("To:") ? "To: <<junk" : l))), "Bad To header"],
      [request(REGISTER.map((l) => (l.startsWith("CSeq") ? "CSeq: 3 INVITE" : l))), "CSeq method does not match the request"],
      [REGISTER.join("\r\n"), "Incomplete message"],
    ];
    for (const [text, reason] of cases) {
      const parsed = parseSip(text);
      expect(parsed.kind === "invalid" && parsed.reason, reason).toBe(reason);
      expect(parsed.kind === "invalid" && parsed.request !== null).toBe(true);
    }
  });

  it("never throws on junk, including what makes sip.js itself throw", () => {
    for (const junk of ["", "\u0000\u0001", "hello\r\n\r\n", "SIP/2.0 200 OK\r\nCSeq: bogus\r\n\r\n", "INVITE\r\n\r\n", "x".repeat(10_000)]) {
      const parsed = parseSip(junk);
      expect(parsed.kind).toBe("invalid");
      expect(parsed.kind === "invalid" && parsed.request).toBeNull();
    }
  });
});

describe("buildResponse", () => {
  it("copies every Via, From, To, Call-ID and CSeq, adding a To tag only when there is none", () => {
    const raw = readRaw(request(REGISTER));
    const text = buildResponse(raw, 401, { toTag: "t1", headers: [["WWW-Authenticate", "Digest x"]] });
    expect(text.split("\r\n")).toEqual([
      "SIP/2.0 401 Unauthorized",
      "Via: SIP/2.0/WSS a.invalid;branch=z9hG4bK1",
      "Via: SIP/2.0/WS b.invalid;branch=z9hG4bK2",
      "From: <sip:agent1@demo.switchboard.local>;tag=abc",
      "To: <sip:agent1@demo.switchboard.local>;tag=t1",
      "Call-ID: call-1",
      "CSeq: 3 REGISTER",
      "WWW-Authenticate: Digest x",
      "Content-Length: 0",
      "",
      "",
    ]);
    const tagged = readRaw(request(REGISTER.map((l) => (l.startsWith("To:") ? "To: <sip:a@b;tag=uri-param>;tag=given" : l))));
    expect(buildResponse(tagged, 200, { toTag: "t2" })).toContain("To: <sip:a@b;tag=uri-param>;tag=given\r\n");
  });

  it("keeps a reason phrase on one line", () => {
    expect(buildResponse(readRaw(request(REGISTER)), 400, { toTag: "t", reason: "Bad\r\nInjected: yes" })).toMatch(/^SIP\/2\.0 400 Bad Injected: yes\r\n/);
  });

  it("hasTag looks only outside the URI's angle brackets", () => {
    expect(hasTag("<sip:a@b;tag=x>")).toBe(false);
    expect(hasTag("<sip:a@b>;tag=x")).toBe(true);
    expect(hasTag("sip:a@b;tag=x")).toBe(true);
  });
});
