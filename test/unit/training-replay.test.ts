// The replay's moment: a run's stored timeline and recipients' steps read at a run second give
// the callers waiting, answered and abandoned, each caller's state, and each person's state and call.
import { describe, expect, it } from "vitest";
import type { RunReplay } from "../../contract/training.js";
import { replayAt, replayLength } from "../../renderer/state/training-replay.js";

const TRAINEE = "a1";
const BOT = "b1";

const replay: RunReplay = {
  run_id: "r1",
  scenario_name: "Replay",
  seed: 1,
  status: "ended",
  started: 63_900_000_000,
  ended: 63_900_000_030,
  duration_s: 20,
  run_seconds: 24,
  people: [
    { user_id: TRAINEE, name: "Alex Agent", simulated: false },
    { user_id: BOT, name: "Simulated agent 1", simulated: true },
  ],
  timeline: [
    { name: "started", at_s: 0 },
    { name: "caller_arrived", at_s: 1, index: 0, persona: "Pat", caller_id_number: "+14155550001" },
    { name: "caller_waiting", at_s: 2, index: 0 },
    { name: "caller_arrived", at_s: 3, index: 1, persona: "Ivy", caller_id_number: "+14155550002" },
    { name: "caller_waiting", at_s: 3.5, index: 1 },
    { name: "caller_answered", at_s: 5, index: 0, agent_id: TRAINEE, wait_s: 3 },
    { name: "paused", at_s: 6 },
    { name: "resumed", at_s: 6 },
    { name: "caller_abandoned", at_s: 8, index: 1, wait_s: 4.5 },
    { name: "caller_left", at_s: 8, index: 1, outcome: "abandoned" },
    { name: "caller_left", at_s: 12, index: 0, outcome: "answered" },
    { name: "caller_arrived", at_s: 20, index: 2, persona: "Pat", caller_id_number: "+14155550003" },
    { name: "caller_waiting", at_s: 21, index: 2 },
    { name: "ended", at_s: 24, reason: "stopped" },
  ],
  agent_steps: [
    { at_s: 0, user_id: TRAINEE, name: "ready", availability_state: "Ready" },
    { at_s: 0.5, user_id: BOT, name: "login", availability_state: "Ready" },
    { at_s: 4, user_id: TRAINEE, name: "offer", availability_state: "Call-Offer" },
    { at_s: 5, user_id: TRAINEE, name: "delivered", availability_state: "On-A-Call" },
    { at_s: 12, user_id: TRAINEE, name: "wrapup", availability_state: "Wrap-Up" },
  ],
};

describe("a run replayed from its stored timeline", () => {
  it("shows two callers waiting before anyone answers", () => {
    const m = replayAt(replay, 4);
    expect([m.arrived, m.waiting, m.answered, m.abandoned]).toEqual([2, 2, 0, 0]);
    expect(m.callers.map((c) => [c.state, c.wait_s])).toEqual([
      ["waiting", 2],
      ["waiting", 0.5],
    ]);
    expect(m.people.map((p) => [p.state, p.call])).toEqual([
      ["Call-Offer", null],
      ["Ready", null],
    ]);
  });

  it("shows the trainee on the answered caller's call, and the impatient one gone once abandoned", () => {
    // A pause takes no run time: the moment of it reads as the moments around it.
    const during = replayAt(replay, 6);
    expect(during.people[0]).toMatchObject({ state: "On-A-Call", call: 0 });
    const m = replayAt(replay, 9);
    expect([m.waiting, m.answered, m.abandoned]).toEqual([0, 1, 1]);
    expect(m.callers[1]).toMatchObject({ state: "ended", outcome: "abandoned", wait_s: 4.5 });
    expect(replayAt(replay, 13).people[0]).toMatchObject({ state: "Wrap-Up", call: null });
  });

  it("ends every caller still on the line with the run, and lasts the run's length", () => {
    expect(replayAt(replay, 22).waiting).toBe(1);
    expect(replayLength({ ...replay, run_seconds: 24.03 })).toBe(24.1);
    const end = replayAt(replay, replayLength(replay));
    expect(end.waiting).toBe(0);
    expect(end.callers[2]).toMatchObject({ state: "ended", outcome: "stopped", wait_s: 3 });
    expect(replayAt(replay, 0).arrived).toBe(0);
  });
});
