// The registrar's bindings and its events: registered (new or refreshed) and unregistered with
// why (un-REGISTER, expiry on the clock, flow closed), and listeners that throw.
import { describe, expect, it } from "vitest";
import { Registrar, type BindingInput, type RegisteredEvent, type UnregisteredEvent } from "../../server/sip/registrar.js";

class FakeClock {
  t = 1_700_000_000_000;
  now = () => this.t;
}

function setup(onListenerError?: (err: unknown) => void) {
  const clock = new FakeClock();
  const registrar = new Registrar({ clock, onListenerError });
  const events: string[] = [];
  registrar.on("registered", (e: RegisteredEvent) => events.push(`registered ${e.binding.contact}${e.refreshed ? " refreshed" : ""}`));
  registrar.on("unregistered", (e: UnregisteredEvent) => events.push(`unregistered ${e.binding.contact} ${e.reason}`));
  const binding = (contact: string, over: Partial<BindingInput> = {}): BindingInput => ({
    accountId: "a".repeat(32),
    deviceId: "d".repeat(32),
    aor: "agent1@demo.switchboard.local",
    contact,
    contactParams: {},
    expiresAt: clock.t + 60_000,
    flowId: "flow1",
    callId: "call",
    cseq: 1,
    ...over,
  });
  return { clock, registrar, events, binding };
}

describe("Registrar", () => {
  it("binds, refreshes the same contact (keeping registeredAt) and lists registered devices", () => {
    const { clock, registrar, events, binding } = setup();
    const first = registrar.bind(binding("sip:x@a.invalid"));
    clock.t += 10_000;
    const again = registrar.bind(binding("sip:x@a.invalid", { expiresAt: clock.t + 60_000, cseq: 2 }));
    registrar.bind(binding("sip:y@b.invalid", { deviceId: "e".repeat(32) }));
    expect(again.registeredAt).toBe(first.registeredAt);
    expect(registrar.bindings("a".repeat(32), "d".repeat(32))).toHaveLength(1);
    expect(registrar.registeredDevices("a".repeat(32))).toEqual(["d".repeat(32), "e".repeat(32)]);
    expect(registrar.registeredDevices("b".repeat(32))).toEqual([]);
    expect(events).toEqual(["registered sip:x@a.invalid", "registered sip:x@a.invalid refreshed", "registered sip:y@b.invalid"]);
  });

  it("ends bindings on un-REGISTER, on expiry by the clock, and when their flow closes, saying which", () => {
    const { clock, registrar, events, binding } = setup();
    registrar.bind(binding("sip:gone@a.invalid"));
    registrar.bind(binding("sip:old@a.invalid", { expiresAt: clock.t + 1000 }));
    registrar.bind(binding("sip:flow2@a.invalid", { flowId: "flow2" }));
    registrar.bind(binding("sip:keep@a.invalid"));
    events.length = 0;
    expect(registrar.unbind("a".repeat(32), "d".repeat(32), "sip:gone@a.invalid")).toBe(true);
    expect(registrar.unbind("a".repeat(32), "d".repeat(32), "sip:gone@a.invalid")).toBe(false);
    clock.t += 1000;
    registrar.sweep();
    registrar.dropFlow("flow2");
    expect(events).toEqual(["unregistered sip:gone@a.invalid unregistered", "unregistered sip:old@a.invalid expired", "unregistered sip:flow2@a.invalid flow_closed"]);
    expect(registrar.bindings("a".repeat(32), "d".repeat(32)).map((b) => b.contact)).toEqual(["sip:keep@a.invalid"]);
    expect(registrar.unbindDevice("a".repeat(32), "d".repeat(32))).toBe(1);
    expect(registrar.size).toBe(0);
  });

  it("reports a lapsed binding as expired before binding its contact anew", () => {
    const { clock, registrar, events, binding } = setup();
    registrar.bind(binding("sip:x@a.invalid", { expiresAt: clock.t + 1000 }));
    clock.t += 2000;
    expect(registrar.lookup("a".repeat(32), "d".repeat(32), "sip:x@a.invalid")).toBeUndefined();
    registrar.bind(binding("sip:x@a.invalid", { expiresAt: clock.t + 60_000 }));
    expect(events).toEqual(["registered sip:x@a.invalid", "unregistered sip:x@a.invalid expired", "registered sip:x@a.invalid"]);
  });

  it("keeps a binding that moved to another flow when the old flow closes", () => {
    const { registrar, binding } = setup();
    registrar.bind(binding("sip:x@a.invalid", { flowId: "old" }));
    registrar.bind(binding("sip:x@a.invalid", { flowId: "new", cseq: 2 }));
    registrar.dropFlow("old");
    expect(registrar.bindings("a".repeat(32), "d".repeat(32)).map((b) => b.flowId)).toEqual(["new"]);
  });

  it("still binds when a listener throws, and reports the error", () => {
    const errors: unknown[] = [];
    const { registrar, binding } = setup((err) => errors.push(err));
    registrar.on("registered", () => {
      throw new Error("listener bug");
    });
    registrar.bind(binding("sip:x@a.invalid"));
    expect(registrar.size).toBe(1);
    expect(errors).toHaveLength(1);
  });
});
