// The success envelope joined around a document's text (server/http/envelope.ts) is byte for byte
// what JSON.stringify makes of the envelope, whatever its strings hold: the texts it keeps from
// one request to the next (the last auth token's, the last second's timestamp) follow each
// change, and strings that need escaping are escaped.
import { describe, expect, it } from "vitest";
import { ApiError, errorEnvelope } from "../../server/http/errors.js";
import { JsonText, envelopeTimestamp, successEnvelope, successEnvelopeText } from "../../server/http/envelope.js";

const doc = { id: "d1", name: "désk \"one\"", n: 1 };
const data = new JsonText(JSON.stringify(doc), () => doc);

function both(options: { revision?: string; requestId: string; authToken: string | null; now: Date; paging?: { page_size: number; next_start_key?: string } }): [string, string] {
  return [successEnvelopeText({ ...options, data }), JSON.stringify(successEnvelope({ ...options, data: doc }))];
}

const AWKWARD = ["", "plain-1.2:3~4+5/6=7_8", 'a"quote', "back\\slash", "new\nline", "tab\t", "\u0000nul", "é accent", "😀", "\u2028sep", "</script>", "x".repeat(200), "y".repeat(128)];

describe("the success envelope's text", () => {
  it("follows the auth token from one call to the next, back and forth", () => {
    const now = new Date(Date.UTC(2026, 10, 27, 8, 0, 0, 5));
    for (const authToken of ["tok-a", "tok-b", "tok-a", null, "tok-a", "", 'tok"c', "tok-a"]) {
      const [ours, reference] = both({ revision: "1-0123456789abcdef0123456789abcdef", requestId: "r1", authToken, now });
      expect(ours).toBe(reference);
    }
  });

  it("follows the clock: the same millisecond, the next one, an earlier one, a far one", () => {
    const base = Date.UTC(2026, 10, 27, 8, 0, 0, 0);
    for (const ms of [base, base, base + 1, base + 1, base - 1000, base + 86_400_000 * 400, base]) {
      const [ours, reference] = both({ revision: "2-0123456789abcdef0123456789abcdef", requestId: "r2", authToken: "t", now: new Date(ms) });
      expect(ours).toBe(reference);
    }
  });

  it("escapes what JSON escapes in the revision, the request id and the token", () => {
    const now = new Date(Date.UTC(2026, 10, 27));
    for (const s of AWKWARD) {
      expect(both({ revision: s, requestId: "r", authToken: "t", now })[0]).toBe(both({ revision: s, requestId: "r", authToken: "t", now })[1]);
      expect(both({ requestId: s, authToken: "t", now, revision: "1-a" })[0]).toBe(both({ requestId: s, authToken: "t", now, revision: "1-a" })[1]);
      expect(both({ requestId: "r", authToken: s, now, revision: "1-a" })[0]).toBe(both({ requestId: "r", authToken: s, now, revision: "1-a" })[1]);
    }
  });

  it("puts paging keys last and takes the content's md5 when no revision is given", () => {
    const now = new Date(Date.UTC(2026, 10, 27));
    const [ours, reference] = both({ requestId: "r", authToken: "t", now, paging: { page_size: 50, next_start_key: 'k"1' } });
    expect(ours).toBe(reference);
  });

  it("writes the timestamp as Kazoo does: UTC to the second, cut (not rounded), with a Z", () => {
    const base = Date.UTC(2017, 4, 1, 20, 31, 35, 0);
    for (const ms of [base, base + 1, base + 999]) expect(envelopeTimestamp(new Date(ms))).toBe("2017-05-01T20:31:35Z");
    expect(envelopeTimestamp(new Date(base + 1000))).toBe("2017-05-01T20:31:36Z");
    expect(envelopeTimestamp(new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 999)))).toBe("1999-12-31T23:59:59Z");
    const now = new Date(base + 640);
    expect(successEnvelope({ data: doc, requestId: "r", authToken: "t", now }).timestamp).toBe("2017-05-01T20:31:35Z");
    expect(JSON.parse(successEnvelopeText({ data, requestId: "r", authToken: "t", now, revision: "1-a" })).timestamp).toBe("2017-05-01T20:31:35Z");
    expect(errorEnvelope(new ApiError("not_found"), "r", now).timestamp).toBe("2017-05-01T20:31:35Z");
  });

  it("throws on an invalid date as toISOString does", () => {
    expect(() => successEnvelopeText({ data, requestId: "r", authToken: "t", now: new Date(Number.NaN), revision: "1-a" })).toThrow(RangeError);
  });
});
