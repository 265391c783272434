// The login throttle's rules without a server: identity keys, loopback never refused unchecked,
// a distinguishable source gated on its own failures only.
import { describe, expect, it } from "vitest";
import { LoginThrottle, identityKey, isLoopback, phoneDigits } from "../../server/auth/throttle.js";

function clockAt(start: number): { now: () => number; advance(ms: number): void } {
  let now = start;
  return { now: () => now, advance: (ms) => void (now += ms) };
}

describe("identityKey", () => {
  it("is the account when one resolves, else the name, realm or digits as the lookup reads them", () => {
    expect(identityKey({ phone_number: "1-001" }, "a1")).toBe("account:a1");
    expect(identityKey({ account_name: "Nowhere" }, undefined)).toBe("name:nowhere");
    expect(identityKey({ account_realm: "X.Example" }, undefined)).toBe("realm:x.example");
    expect(identityKey({ phone_number: "(99) 9-9a" }, undefined)).toBe("number:9999");
    expect(phoneDigits("+1 (415) 555-0101 ext")).toBe("+14155550101");
  });
});

describe("isLoopback", () => {
  it("knows the addresses every local process shares", () => {
    for (const a of ["127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1"]) expect(isLoopback(a)).toBe(true);
    for (const a of ["10.0.0.5", "::ffff:192.168.1.9", "fe80::1", "128.0.0.1"]) expect(isLoopback(a)).toBe(false);
  });
});

describe("LoginThrottle", () => {
  it("never refuses loopback unchecked; the identity goes into a doubling back-off after five failures", () => {
    const clock = clockAt(1_000_000);
    const throttle = new LoginThrottle(clock);
    const local = { identity: "account:a1", source: "127.0.0.1" };
    for (let i = 0; i < 4; i++) throttle.failed(local);
    expect(throttle.identityWait(local)).toBe(0);
    throttle.failed(local);
    expect(throttle.identityWait(local)).toBe(1_000);
    throttle.failed(local);
    expect(throttle.identityWait(local)).toBe(2_000);
    for (let i = 0; i < 40; i++) throttle.failed(local);
    expect(throttle.identityWait(local)).toBe(30_000);
    expect(throttle.sourceWait(local)).toBe(0);
    throttle.succeeded(local);
    expect(throttle.identityWait(local)).toBe(0);
  });

  it("gates a remote source on its own failures, and no other source", () => {
    const clock = clockAt(1_000_000);
    const throttle = new LoginThrottle(clock);
    const attacker = { identity: "account:a1", source: "203.0.113.7" };
    const agent = { identity: "account:a1", source: "198.51.100.2" };
    for (let i = 0; i < 5; i++) throttle.failed(attacker);
    expect(throttle.sourceWait(attacker)).toBe(1_000);
    expect(throttle.sourceWait(agent)).toBe(0);
    expect(throttle.sourceWait({ ...attacker, identity: "account:a2" })).toBe(0);
    clock.advance(1_000);
    expect(throttle.sourceWait(attacker)).toBe(0);
  });

  it("forgets a key a quarter of an hour after its last failure", () => {
    const clock = clockAt(1_000_000);
    const throttle = new LoginThrottle(clock);
    const local = { identity: "name:x", source: "::1" };
    for (let i = 0; i < 6; i++) throttle.failed(local);
    clock.advance(15 * 60_000 + 1);
    expect(throttle.identityWait(local)).toBe(0);
    throttle.failed(local);
    expect(throttle.identityWait(local)).toBe(0);
  });
});
