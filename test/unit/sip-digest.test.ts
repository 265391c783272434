// Digest authentication pieces: the response computation (RFC 2617's own example), parsing of
// Authorization headers, and nonces that expire and refuse a replayed count.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { challenge, digestMatches, digestResponse, NonceBook, parseAuthorization } from "../../server/sip/digest.js";

const md5 = (s: string) => createHash("md5").update(s).digest("hex");

class FakeClock {
  t = 1_700_000_000_000;
  now = () => this.t;
}

let counter = 0;
const random = { bytes: (n: number) => Buffer.alloc(n, ++counter) };

describe("digestResponse", () => {
  it("computes RFC 2617 §3.5's example with qop=auth", () => {
    expect(
      digestResponse({
        username: "Mufasa",
        realm: "testrealm@host.com",
        password: "Circle Of Life",
        method: "GET",
        uri: "/dir/index.html",
        nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
        qop: "auth",
        nc: "00000001",
        cnonce: "0a4f113b",
      }),
    ).toBe("6629fae49393a05397450978507c4ef1");
  });

  it("computes the RFC 2069 form without qop", () => {
    const ha1 = md5("agent1:demo.switchboard.local:secret");
    const ha2 = md5("REGISTER:sip:demo.switchboard.local");
    expect(
      digestResponse({ username: "agent1", realm: "demo.switchboard.local", password: "secret", method: "REGISTER", uri: "sip:demo.switchboard.local", nonce: "abc" }),
    ).toBe(md5(`${ha1}:abc:${ha2}`));
  });

  it("matches only the right password and method, whatever the hex case of the response", () => {
    const base = { username: "u", realm: "r", uri: "sip:r", nonce: "n", qop: "auth", nc: "00000001", cnonce: "c" };
    const response = digestResponse({ ...base, password: "pw", method: "REGISTER" });
    expect(digestMatches({ ...base, response: response.toUpperCase() }, "REGISTER", "pw")).toBe(true);
    expect(digestMatches({ ...base, response }, "REGISTER", "other")).toBe(false);
    expect(digestMatches({ ...base, response }, "INVITE", "pw")).toBe(false);
    expect(digestMatches({ ...base, response: "short" }, "REGISTER", "pw")).toBe(false);
  });
});

describe("parseAuthorization", () => {
  it("reads quoted and bare parameters, commas and escapes inside quotes, any key case", () => {
    const c = parseAuthorization(
      'Digest USERNAME="ag\\"ent", realm="a, b", nonce="n1", uri="sip:x", response="0123", algorithm=MD5, qop=auth, nc=00000002, cnonce="cn"',
    );
    expect(c).toEqual({ username: 'ag"ent', realm: "a, b", nonce: "n1", uri: "sip:x", response: "0123", algorithm: "MD5", qop: "auth", nc: "00000002", cnonce: "cn", opaque: undefined });
  });

  it("refuses other schemes, missing parameters, qop without nc/cnonce, repeats and broken quotes", () => {
    expect(parseAuthorization('Basic dXNlcjpwYXNz')).toBeNull();
    expect(parseAuthorization('Digest username="u", realm="r", nonce="n", uri="sip:x"')).toBeNull();
    expect(parseAuthorization('Digest username="u", realm="r", nonce="n", uri="sip:x", response="1", qop=auth')).toBeNull();
    expect(parseAuthorization('Digest username="u", username="v", realm="r", nonce="n", uri="sip:x", response="1"')).toBeNull();
    expect(parseAuthorization('Digest username="u, realm="r"')).toBeNull();
    expect(parseAuthorization("Digest =x")).toBeNull();
  });
});

describe("challenge", () => {
  it("offers MD5 with qop auth in the realm, stale only when asked", () => {
    expect(challenge("demo.switchboard.local", "abc")).toBe('Digest realm="demo.switchboard.local", nonce="abc", algorithm=MD5, qop="auth"');
    expect(challenge("r", "n", true)).toMatch(/, stale=true$/);
  });
});

describe("NonceBook", () => {
  it("gives fresh nonces that go stale after their time on the clock", () => {
    const clock = new FakeClock();
    const book = new NonceBook({ clock, random, ttlMs: 1000 });
    const nonce = book.issue();
    expect(nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(book.issue()).not.toBe(nonce);
    expect(book.use(nonce)).toBe("fresh");
    clock.t += 1000;
    expect(book.use(nonce)).toBe("stale");
    expect(book.use("never-issued")).toBe("stale");
  });

  it("takes each nonce count once, rising", () => {
    const book = new NonceBook({ clock: new FakeClock(), random });
    const nonce = book.issue();
    expect(book.use(nonce, "00000001")).toBe("fresh");
    expect(book.use(nonce, "00000001")).toBe("stale");
    expect(book.use(nonce, "00000003")).toBe("fresh");
    expect(book.use(nonce, "00000002")).toBe("stale");
    expect(book.use(nonce, "junk")).toBe("stale");
  });

  it("takes a nonce without a count once only, and not at all once it was used with counts", () => {
    const book = new NonceBook({ clock: new FakeClock(), random });
    const once = book.issue();
    expect(book.use(once)).toBe("fresh");
    expect(book.use(once)).toBe("stale");
    expect(book.use(once, "00000001")).toBe("stale");
    const counted = book.issue();
    expect(book.use(counted, "00000001")).toBe("fresh");
    expect(book.use(counted)).toBe("stale");
  });

  it("keeps at most `max` nonces, forgetting the oldest, and prunes expired ones", () => {
    const clock = new FakeClock();
    const book = new NonceBook({ clock, random, ttlMs: 1000, max: 3 });
    const first = book.issue();
    for (let i = 0; i < 3; i++) book.issue();
    expect(book.size).toBe(3);
    expect(book.use(first)).toBe("stale");
    clock.t += 1000;
    book.prune();
    expect(book.size).toBe(0);
  });
});
