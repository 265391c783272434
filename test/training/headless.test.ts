// Headless runs: the scenario's callers against simulated agents on the real queue engine, on a
// manual clock. The same seed gives the same outcomes; the summary is what the per-caller records
// say, and the records are what the engine's own events say.
import { describe, expect, it } from "vitest";
import { plannedCallers, runHeadless, ScenarioTooBigError } from "../../server/training/index.js";
import { persona, scenario } from "./fixtures.js";

const busy = scenario({
  duration_s: 3600,
  seed: 2026,
  queues: [
    { number: "+14155550100", name: "Support", rate_per_hour: 100, bursts: [{ at_s: 900, count: 15, within_s: 20 }] },
    { number: "+14155550200", name: "Sales", rate_per_hour: 40 },
  ],
  personas: [
    persona({ name: "Patient", weight: 3, patience: { distribution: "uniform", min_s: 60, max_s: 240 }, talk_time: { distribution: "exponential", mean_s: 90 } }),
    persona({ name: "Hurried", weight: 2, patience: { distribution: "exponential", mean_s: 25 } }),
    persona({ name: "Stays", weight: 1, abandons: false }),
    persona({ name: "Texter", weight: 1, texts_instead: true }),
  ],
  faults: [
    { at_s: 1800, kind: "burst", target: "+14155550200", count: 6 },
    { at_s: 600, kind: "one_way_audio", target: "trainee" },
  ],
  agents: { count: 3, ring_delay_s: 4, handle_time: { distribution: "lognormal", mean_s: 150, sd_s: 60 }, wrapup_s: 15 },
});

describe("a headless run", () => {
  it("gives the same outcomes for the same seed, and others for another seed", async () => {
    const first = await runHeadless(busy);
    const second = await runHeadless(structuredClone(busy));
    expect(second.callers).toEqual(first.callers);
    expect(second.summary).toEqual(first.summary);
    const other = await runHeadless({ ...busy, seed: 2027 });
    expect(other.callers.map((c) => c.outcome)).not.toEqual(first.callers.map((c) => c.outcome));
  });

  it("answers with a summary that is what its per-caller records say, and records that are what the engine said", async () => {
    const { callers, summary, engine } = await runHeadless(busy);
    const planned = plannedCallers(busy);
    expect(callers.map((c) => c.index)).toEqual(planned.map((p) => p.index));
    const offered = callers.filter((c) => c.outcome !== "texted");
    const answered = offered.filter((c) => c.outcome === "answered");
    const abandoned = offered.filter((c) => c.outcome === "abandoned");
    // Every kind of outcome happens in this scenario.
    expect(answered.length).toBeGreaterThan(20);
    expect(abandoned.length).toBeGreaterThan(5);
    expect(summary.texted).toBe(planned.filter((p) => p.texts_instead).length);
    expect(summary.texted).toBeGreaterThan(0);

    expect(summary).toMatchObject({ callers: planned.length, offered: offered.length, answered: answered.length, abandoned: abandoned.length });
    expect(summary.offered + summary.texted).toBe(summary.callers);
    expect(summary.answered + summary.abandoned + summary.timed_out).toBe(summary.offered);
    // The engine's events: one join per caller offered, one answered / abandoned per record.
    expect(engine.queue.join).toBe(offered.length);
    expect(engine.queue.answered).toBe(answered.length);
    expect(engine.queue.abandoned ?? 0).toBe(abandoned.length);
    expect(engine.queue.leave).toBe(offered.length);
    for (const agent of summary.agents) {
      const theirs = answered.filter((c) => c.agent_id === agent.agent_id);
      expect(agent.answered).toBe(theirs.length);
      expect(engine.delivered[agent.agent_id]).toBe(theirs.length);
      expect(agent.talk_s).toBeCloseTo(theirs.reduce((sum, c) => sum + (c.talk_s ?? 0), 0), 0);
      expect(agent.wrapup_s).toBe(theirs.length * 15);
    }
    expect(summary.agents.reduce((sum, a) => sum + a.answered, 0)).toBe(summary.answered);

    const within = answered.filter((c) => (c.wait_s ?? 0) <= 20).length;
    expect(summary.service_level).toEqual({ answered_within_s: 20, target_percent: 80, percent: round1((within / offered.length) * 100), met: (within / offered.length) * 100 >= 80 });
    expect(summary.average_speed_of_answer_s).toBe(round1(answered.reduce((sum, c) => sum + (c.wait_s ?? 0), 0) / answered.length));
    expect(summary.average_handle_time_s).toBe(round1(answered.reduce((sum, c) => sum + (c.talk_s ?? 0) + 15, 0) / answered.length));
    for (const q of summary.queues) {
      const mine = offered.filter((c) => c.queue === q.queue);
      expect(q.offered).toBe(mine.length);
      expect(q.answered).toBe(mine.filter((c) => c.outcome === "answered").length);
    }
    expect(summary.queues.reduce((sum, q) => sum + q.offered, 0)).toBe(summary.offered);
    expect(summary.faults).toEqual([
      { at_s: 1800, kind: "burst", target: "+14155550200", applied: true },
      { at_s: 600, kind: "one_way_audio", target: "trainee", applied: false },
    ]);
  });

  it("callers behave as their personas say: abandon at their patience, wait past no patience, answered after the ring, talk no longer than they would", async () => {
    const { callers } = await runHeadless(busy);
    const planned = new Map(plannedCallers(busy).map((p) => [p.index, p]));
    for (const c of callers) {
      const p = planned.get(c.index);
      if (c.outcome === "abandoned") expect(c.wait_s).toBeCloseTo(p?.patience_s ?? -1, 2);
      if (c.outcome === "answered") {
        expect(c.wait_s ?? 0).toBeGreaterThanOrEqual(4);
        if (p?.patience_s != null) expect(c.wait_s ?? 0).toBeLessThanOrEqual(p.patience_s);
        if (p?.talk_s != null) expect(c.talk_s ?? 0).toBeLessThanOrEqual(p.talk_s + 0.001);
        expect(c.agent_id).toMatch(/^sim-agent-00[123]$/);
      }
      if (p?.persona_name === "Stays") expect(c.outcome).toBe("answered");
    }
    expect(callers.some((c) => c.abandoned_while_ringing)).toBe(true);
  });

  it("with no agents every caller who abandons waits exactly their patience, and the rest time out at the queue's limit", async () => {
    const s = scenario({ seed: 5, agents: { count: 0, ring_delay_s: 3, handle_time: { distribution: "fixed", mean_s: 60 }, wrapup_s: 0 }, personas: [persona({ weight: 4 }), persona({ name: "Stays", abandons: false })] });
    const { callers, summary } = await runHeadless(s);
    expect(summary.answered).toBe(0);
    for (const c of callers) {
      if (c.persona === "Stays") expect(c).toMatchObject({ outcome: "timeout", wait_s: 3600 });
      else expect(c.outcome === "abandoned" || (c.patience_s ?? 0) >= 3600).toBe(true);
    }
    expect(summary.timed_out).toBeGreaterThan(0);
  });

  it("refuses a scenario with more callers than allowed before running it", async () => {
    await expect(runHeadless(scenario({ queues: [{ number: "+14155550100", rate_per_hour: 5000 }] }), { maxCallers: 1000 })).rejects.toBeInstanceOf(ScenarioTooBigError);
  });
});

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
