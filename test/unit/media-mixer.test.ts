import { describe, expect, it } from "vitest";
import { FRAME_SAMPLES, type AudioSource } from "../../server/media/audio-frame.js";
import { hears, mixInto, Mixer, type Member } from "../../server/media/mixer.js";

/** A voice that says one constant value, counting how often it is read. */
function voice(value: number): AudioSource & { reads: number } {
  const frame = new Int16Array(FRAME_SAMPLES).fill(value);
  return {
    reads: 0,
    ended: false,
    read() {
      this.reads++;
      return frame;
    },
  };
}

/** What each port hears at `tick`: the first sample suffices, every sample is the same. */
function heard(ports: Record<string, AudioSource>, tick: number): Record<string, number> {
  return Object.fromEntries(Object.entries(ports).map(([id, port]) => [id, port.read(tick)[0]]));
}

describe("mixInto", () => {
  it("adds frames sample by sample", () => {
    const out = mixInto(new Int16Array(3), [Int16Array.from([1, -2, 300]), Int16Array.from([10, 20, -30])]);
    expect([...out]).toEqual([11, 18, 270]);
  });

  it("saturates at the 16-bit limits instead of wrapping round", () => {
    const loud = Int16Array.from([30000, -30000, 32767]);
    expect([...mixInto(new Int16Array(3), [loud, loud])]).toEqual([32767, -32768, 32767]);
  });

  it("gives silence for nothing to mix", () => {
    expect([...mixInto(Int16Array.from([5, 5]), [])]).toEqual([0, 0]);
  });
});

describe("Mixer", () => {
  // Distinct powers of ten make every sum readable: 1 = caller, 10 = agent, 100 = supervisor.
  function call() {
    const mixer = new Mixer();
    const caller = voice(1);
    const agent = voice(10);
    const ports = { caller: mixer.join("caller", caller), agent: mixer.join("agent", agent) };
    return { mixer, caller, agent, ports };
  }

  it("lets each party hear the others but not itself", () => {
    const { ports } = call();
    expect(heard(ports, 1)).toEqual({ caller: 10, agent: 1 });
  });

  it("mixes every other party in a conference", () => {
    const mixer = new Mixer();
    const ports = { a: mixer.join("a", voice(1)), b: mixer.join("b", voice(10)), c: mixer.join("c", voice(100)) };
    expect(heard(ports, 1)).toEqual({ a: 110, b: 101, c: 11 });
  });

  it("eavesdrop: the supervisor hears both, nobody hears the supervisor", () => {
    const { mixer, ports } = call();
    const all = { ...ports, sup: mixer.join("sup", voice(100), { kind: "monitor", mode: "eavesdrop", target: "agent" }) };
    expect(heard(all, 1)).toEqual({ caller: 10, agent: 1, sup: 11 });
  });

  it("whisper: only the agent hears the supervisor", () => {
    const { mixer, ports } = call();
    const all = { ...ports, sup: mixer.join("sup", voice(100), { kind: "monitor", mode: "whisper", target: "agent" }) };
    expect(heard(all, 1)).toEqual({ caller: 10, agent: 101, sup: 11 });
  });

  it("barge: both parties hear the supervisor", () => {
    const { mixer, ports } = call();
    const all = { ...ports, sup: mixer.join("sup", voice(100), { kind: "monitor", mode: "barge" }) };
    expect(heard(all, 1)).toEqual({ caller: 110, agent: 101, sup: 11 });
  });

  it("switches modes live, from the next tick on", () => {
    const { mixer, ports } = call();
    const all = { ...ports, sup: mixer.join("sup", voice(100), { kind: "monitor", mode: "eavesdrop", target: "agent" }) };
    expect(heard(all, 1)).toEqual({ caller: 10, agent: 1, sup: 11 });
    mixer.setMonitor("sup", "whisper");
    expect(heard(all, 1)).toEqual({ caller: 10, agent: 1, sup: 11 }); // same tick: already mixed
    expect(heard(all, 2)).toEqual({ caller: 10, agent: 101, sup: 11 });
    mixer.setMonitor("sup", "barge");
    expect(heard(all, 3)).toEqual({ caller: 110, agent: 101, sup: 11 });
    mixer.setMonitor("sup", "eavesdrop");
    expect(heard(all, 4)).toEqual({ caller: 10, agent: 1, sup: 11 });
  });

  it("reads each voice once per tick however many ports and taps read", () => {
    const { mixer, caller, agent, ports } = call();
    const taps: number[] = [];
    mixer.tap((tick, input, output) => taps.push(tick, input.get("caller")?.[0] ?? -1, output.get("caller")?.[0] ?? -1));
    for (let tick = 1; tick <= 3; tick++) heard(ports, tick);
    expect([caller.reads, agent.reads]).toEqual([3, 3]);
    expect(taps).toEqual([1, 1, 10, 2, 1, 10, 3, 1, 10]);
  });

  it("ends a member's port when it leaves, and the others stop hearing it", () => {
    const { mixer, ports } = call();
    mixer.leave("agent");
    expect(ports.agent.ended).toBe(true);
    expect(ports.caller.ended).toBe(false);
    expect(ports.caller.read(1)[0]).toBe(0);
    expect(ports.agent.read(1)[0]).toBe(0);
  });

  it("refuses a whisper without a target, a duplicate member and setMonitor on a party", () => {
    const { mixer } = call();
    expect(() => mixer.join("sup", voice(1), { kind: "monitor", mode: "whisper" })).toThrow(/target/);
    expect(() => mixer.join("caller", voice(1))).toThrow(/already/);
    expect(() => mixer.setMonitor("caller", "barge")).toThrow(/not a monitor/);
    expect(mixer.members.map((m) => m.id)).toEqual(["caller", "agent"]);
  });

  it("hears() follows the table of monitor modes", () => {
    const caller: Member = { id: "caller", role: { kind: "party" } };
    const agent: Member = { id: "agent", role: { kind: "party" } };
    const sup = (mode: "eavesdrop" | "whisper" | "barge"): Member => ({ id: "sup", role: { kind: "monitor", mode, target: "agent" } });
    const table = (["eavesdrop", "whisper", "barge"] as const).map((mode) => [
      mode,
      hears(caller, sup(mode)),
      hears(agent, sup(mode)),
      hears(sup(mode), caller) && hears(sup(mode), agent),
    ]);
    expect(table).toEqual([
      ["eavesdrop", false, false, true],
      ["whisper", false, true, true],
      ["barge", true, true, true],
    ]);
  });
});
