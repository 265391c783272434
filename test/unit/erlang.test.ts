// Erlang C and Erlang A against published figures and exact identities.
import { describe, expect, it } from "vitest";
import { erlangA, erlangAAgents, erlangB, erlangC, erlangCAgents, erlangCAsa, erlangCServiceLevel, offeredLoad } from "../../server/callq/erlang.js";
import { emptyFigures } from "../../server/callq/intervals.js";
import { staffingEstimate } from "../../server/callq/staffing.js";

describe("Erlang C", () => {
  // Call Centre Helper, "Erlang C Formula – Made Simple With an Easy Worked Example"
  // (callcentrehelper.com): 100 calls in 30 minutes, 180 s average handle time, 80% answered in
  // 20 s. Its table: 11 agents wait 68.2%, service level 39.0%, ASA 122.8 s; 12 agents 44.9%,
  // 64.0%, 40.4 s; 13 agents 28.5%, 79.6%, 17.1 s; 14 agents 17.4%, 88.8%, 7.8 s; so 14 agents
  // (before shrinkage).
  const helper = { arrivalRate: 100 / 1800, handleTime: 180 };
  const table: [number, number, number, number][] = [
    [11, 0.682, 0.39, 122.8],
    [12, 0.449, 0.64, 40.4],
    [13, 0.285, 0.796, 17.1],
    [14, 0.174, 0.888, 7.8],
  ];

  it("matches Call Centre Helper's worked example agent by agent", () => {
    expect(offeredLoad(helper)).toBeCloseTo(10, 10);
    for (const [agents, wait, level, asa] of table) {
      expect(erlangC(agents, 10)).toBeCloseTo(wait, 3);
      expect(erlangCServiceLevel(agents, helper, 20)).toBeCloseTo(level, 3);
      expect(erlangCAsa(agents, helper)).toBeCloseTo(asa, 1);
    }
    expect(erlangCAgents(helper, 20, 0.8)).toBe(14);
  });

  // Mitan Ltd, "The Erlang-C Formula" (step-by-step example): 360 calls per half hour, 4 minutes
  // per call, 55 agents, 15 s target: traffic 48 Erlangs, occupancy 87.3%, probability of waiting
  // 24%, ASA 8.2 s, service level 85%.
  it("matches Mitan's step-by-step example", () => {
    const traffic = { arrivalRate: 360 / 1800, handleTime: 240 };
    expect(offeredLoad(traffic)).toBeCloseTo(48, 10);
    expect(48 / 55).toBeCloseTo(0.873, 3);
    expect(erlangC(55, 48)).toBeCloseTo(0.24, 2);
    expect(erlangCAsa(55, traffic)).toBeCloseTo(8.2, 1);
    expect(erlangCServiceLevel(55, traffic, 15)).toBeCloseTo(0.85, 2);
  });

  it("treats an overloaded or idle queue as such", () => {
    expect(erlangC(10, 10)).toBe(1);
    expect(erlangCServiceLevel(9, { arrivalRate: 1, handleTime: 10 }, 20)).toBe(0);
    expect(erlangCAsa(9, { arrivalRate: 1, handleTime: 10 })).toBe(Infinity);
    expect(erlangC(3, 0)).toBe(0);
    expect(erlangCAgents({ arrivalRate: 0, handleTime: 100 }, 20, 0.8)).toBe(0);
  });

  it("stays finite for loads far past the factorials' range", () => {
    expect(erlangB(1000, 950)).toBeGreaterThan(0);
    const level = erlangCServiceLevel(1000, { arrivalRate: 950 / 200, handleTime: 200 }, 20);
    expect(level).toBeGreaterThan(0);
    expect(level).toBeLessThan(1);
  });
});

describe("Erlang A (Palm's M/M/n+M)", () => {
  // With patience as long as the handle time (θ = μ) every caller leaves at rate μ, waiting or
  // served, so the number in the system is that of M/M/∞: Poisson with mean A (Mandelbaum &
  // Zeltyn, "The Palm/Erlang-A queue, with applications to call centers", 2007, section on
  // special cases). Then P(wait) = P(N ≥ n) and P(abandon) = E[(N−n)+] / A exactly.
  it("equals the M/M/∞ identities when patience equals the handle time", () => {
    const load = 8;
    const agents = 10;
    const traffic = { arrivalRate: load / 120, handleTime: 120, patience: 120 };
    const poisson: number[] = [Math.exp(-load)];
    for (let k = 1; k < 200; k++) poisson.push(((poisson[k - 1] ?? 0) * load) / k);
    const wait = poisson.slice(agents).reduce((a, b) => a + b, 0);
    const excess = poisson.reduce((sum, pk, k) => sum + Math.max(0, k - agents) * pk, 0);
    const a = erlangA(agents, traffic, 20);
    expect(a.waitProbability).toBeCloseTo(wait, 10);
    expect(a.abandonProbability).toBeCloseTo(excess / load, 10);
    // Little's law on the line: the average wait of all callers is E[(N−n)+] / λ.
    expect(a.averageWait).toBeCloseTo(excess / traffic.arrivalRate, 6);
  });

  it("becomes Erlang C as patience grows without bound", () => {
    const traffic = { arrivalRate: 100 / 1800, handleTime: 180, patience: 1e12 };
    for (const [agents, wait, level] of table()) {
      const a = erlangA(agents, traffic, 20);
      expect(a.waitProbability).toBeCloseTo(wait, 6);
      expect(a.serviceLevel).toBeCloseTo(level, 4);
      expect(a.abandonProbability).toBeLessThan(1e-6);
    }
    expect(erlangAAgents(traffic, 20, 0.8)).toBe(14);
  });

  it("needs fewer agents than Erlang C when callers give up, and copes with overload", () => {
    const impatient = { arrivalRate: 100 / 1800, handleTime: 180, patience: 60 };
    const needed = erlangAAgents(impatient, 20, 0.8);
    expect(needed).toBeLessThan(14);
    expect(erlangA(needed, impatient, 20).serviceLevel).toBeGreaterThanOrEqual(0.8);
    expect(erlangA(needed - 1, impatient, 20).serviceLevel).toBeLessThan(0.8);
    // Fewer agents than the load: Erlang C has no answer, Erlang A does (callers give up).
    const over = erlangA(8, impatient, 20);
    expect(over.abandonProbability).toBeGreaterThan(0.1);
    expect(over.abandonProbability).toBeLessThan(1);
  });
});

function table(): [number, number, number][] {
  return [11, 12, 13, 14].map((n) => [n, erlangC(n, 10), erlangCServiceLevel(n, { arrivalRate: 100 / 1800, handleTime: 180 }, 20)]);
}

describe("the staffing estimate", () => {
  it("gives an estimate for calls handled in under a twentieth of a second on average (their rounded handle time is 0.0)", () => {
    const window = { ...emptyFigures(), offered: 2, answered: 2, handled: 2, handle_sum: 0.06 };
    const estimate = staffingEstimate({
      window,
      day: window,
      windowS: 3600,
      minutes: 60,
      config: { serviceLevelS: 20, serviceLevelTarget: 80, wrapupS: 0 },
      loggedIn: 1,
      ready: 1,
      whatIf: {},
    });
    expect(estimate.handle_time).toBe(0);
    expect(estimate.agents_needed).toBe(1);
  });
});
