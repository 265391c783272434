// The client side under dialogs: an INVITE transaction's Timer B stopping at a 1xx, its 2xx kept
// for retransmissions until Timer M, a closed flow failing requests as 503; the call timers on the
// clock; and which failure a forked call reports (RFC 3261 §16.7).
import { describe, expect, it } from "vitest";
import { Deadlines } from "../../server/sip/deadlines.js";
import { bestFailure } from "../../server/sip/invite-client.js";
import { parseSip, type SipResponse } from "../../server/sip/message.js";
import { ClientTransactions } from "../../server/sip/transactions.js";

const clock = { t: 1_700_000_000_000, now(): number { return this.t; } };

function response(status: number, method = "INVITE", branch = "z9hG4bKa", toTag = "t1"): SipResponse {
  const parsed = parseSip(
    [`SIP/2.0 ${status} X`, `Via: SIP/2.0/WS h;branch=${branch}`, "From: <sip:a@b>;tag=f", `To: <sip:c@b>;tag=${toTag}`, "Call-ID: c1", `CSeq: 1 ${method}`, "Content-Length: 0", "", ""].join("\r\n"),
  );
  if (parsed.kind !== "response") throw new Error("not a response");
  return parsed;
}

describe("ClientTransactions for INVITE", () => {
  it("stops Timer B at the first 1xx: a ringing INVITE is not timed out", () => {
    const tx = new ClientTransactions({ clock });
    const finals: number[] = [];
    const provisional: number[] = [];
    tx.start({ branch: "z9hG4bKa", method: "INVITE", cseq: 1, flowId: "f", onFinal: (s) => finals.push(s), onProvisional: (r) => provisional.push(r.status) });
    expect(tx.receive(response(180), "f")).toBe(true);
    clock.t += 60_000;
    tx.prune();
    expect(finals).toEqual([]);
    expect(provisional).toEqual([180]);
    expect(tx.receive(response(486), "f")).toBe(true);
    expect(finals).toEqual([486]);
    expect(tx.size).toBe(0);
  });

  it("times out an INVITE without any answer as 408, like any request", () => {
    const tx = new ClientTransactions({ clock });
    const finals: number[] = [];
    tx.start({ branch: "z9hG4bKb", method: "INVITE", cseq: 1, flowId: "f", onFinal: (s) => finals.push(s) });
    clock.t += 32_000;
    tx.prune();
    expect(finals).toEqual([408]);
  });

  it("keeps an INVITE after its 2xx until Timer M, handing on each later 2xx once the final was reported", () => {
    const tx = new ClientTransactions({ clock });
    const finals: number[] = [];
    const later: string[] = [];
    tx.start({ branch: "z9hG4bKc", method: "INVITE", cseq: 1, flowId: "f", onFinal: (s) => finals.push(s), onLater2xx: (r) => later.push(r.message.toTag) });
    tx.receive(response(200, "INVITE", "z9hG4bKc", "one"), "f");
    tx.receive(response(200, "INVITE", "z9hG4bKc", "one"), "f");
    tx.receive(response(200, "INVITE", "z9hG4bKc", "two"), "f");
    tx.receive(response(180, "INVITE", "z9hG4bKc"), "f");
    expect(finals).toEqual([200]);
    expect(later).toEqual(["one", "two"]);
    clock.t += 32_000;
    tx.prune();
    expect(finals).toEqual([200]);
    expect(tx.size).toBe(0);
  });

  it("fails what was sent on a flow that closed with 503, and matches nothing from another flow", () => {
    const tx = new ClientTransactions({ clock });
    const finals: string[] = [];
    tx.start({ branch: "z9hG4bKd", method: "BYE", cseq: 2, flowId: "f1", onFinal: (s) => finals.push(`f1:${s}`) });
    tx.start({ branch: "z9hG4bKe", method: "BYE", cseq: 2, flowId: "f2", onFinal: (s) => finals.push(`f2:${s}`) });
    expect(tx.receive(response(200, "BYE", "z9hG4bKd"), "f2")).toBe(false);
    tx.dropFlow("f1");
    expect(finals).toEqual(["f1:503"]);
    tx.stop("z9hG4bKe", "BYE", 2);
    expect(tx.size).toBe(0);
  });

  it("reports a callback that throws and still calls the others", () => {
    const errors: unknown[] = [];
    const tx = new ClientTransactions({ clock, onError: (err) => errors.push(err) });
    const finals: number[] = [];
    const throwing = (): void => {
      throw new Error("listener");
    };
    tx.start({ branch: "z9hG4bKf", method: "BYE", cseq: 2, flowId: "f", onFinal: throwing });
    tx.start({ branch: "z9hG4bKg", method: "BYE", cseq: 2, flowId: "f", onFinal: (s) => finals.push(s) });
    tx.dropFlow("f");
    expect(errors).toHaveLength(1);
    expect(finals).toEqual([503]);
  });
});

describe("Deadlines", () => {
  it("runs what is due at a sweep, not before; a cancelled one never; one that throws does not stop the rest", () => {
    const errors: unknown[] = [];
    const deadlines = new Deadlines(clock, (err) => errors.push(err));
    const ran: string[] = [];
    deadlines.after(1000, () => ran.push("a"));
    const cancel = deadlines.after(1000, () => ran.push("b"));
    deadlines.after(500, () => {
      throw new Error("boom");
    });
    deadlines.after(2000, () => ran.push("c"));
    cancel();
    clock.t += 999;
    deadlines.sweep();
    expect(ran).toEqual([]);
    expect(errors).toHaveLength(1);
    clock.t += 1;
    deadlines.sweep();
    deadlines.sweep();
    expect(ran).toEqual(["a"]);
    expect(deadlines.size).toBe(1);
  });
});

describe("bestFailure (§16.7)", () => {
  const f = (status: number) => ({ status, reason: String(status) });
  it("prefers any 6xx, then the lowest class, the first of it", () => {
    expect(bestFailure([f(486), f(603), f(480)])).toEqual(f(603));
    expect(bestFailure([f(503), f(486), f(480)])).toEqual(f(486));
    expect(bestFailure([f(500), f(408)])).toEqual(f(408));
    expect(bestFailure([f(302), f(404)])).toEqual(f(302));
    expect(bestFailure([])).toEqual({ status: 408, reason: "Request Timeout" });
  });
});
