// A headless training day (issue 18): an 8-hour scenario of about 2,000 callers against 20
// simulated agents, run on the real queue engine on a manual clock, as fast as the CPU allows.
// Figures: wall time and CPU, the service level, and the inputs of the Erlang-C estimate (arrival
// rate, mean handle time, offered load in erlangs, agents, answer-time threshold), so its column
// can be set beside the measured service level. Two variants: callers who never abandon and bots
// who answer at once (Erlang C's own assumptions), then a realistic day (3 s ring, patience).
import { performance } from "node:perf_hooks";
import { meanOf, runHeadless, type Scenario } from "../server/training/index.js";
import { erlangA, erlangCAsa, erlangCServiceLevel } from "../server/callq/erlang.js";
import { report } from "./report.js";

const HOURS = 8;
const AGENTS = Number(process.env.BENCH_TRAINING_AGENTS ?? 20);
const CALLERS = Number(process.env.BENCH_TRAINING_CALLERS ?? 2000);
const RATE_PER_HOUR = CALLERS / HOURS;
const THRESHOLD_S = 20;
const PATIENCE_S = 120;

function day(variant: "erlang" | "realistic"): Scenario {
  const realistic = variant === "realistic";
  return {
    name: `bench ${variant}`,
    duration_s: HOURS * 3600,
    seed: 18,
    queues: [{ number: "+14155550100", name: "Support", rate_per_hour: RATE_PER_HOUR }],
    personas: [
      {
        name: "Caller",
        weight: 1,
        number: "+1415555####",
        language: "en-US",
        lines: [],
        patience: { distribution: "exponential", mean_s: PATIENCE_S },
        abandons: realistic,
        asks_for_supervisor: false,
        texts_instead: false,
      },
    ],
    targets: { service_level: { answered_within_s: THRESHOLD_S, percent: 80 }, handle_time_s: 300 },
    faults: [],
    agents: { count: AGENTS, ring_delay_s: realistic ? 3 : 0, handle_time: { distribution: "exponential", mean_s: 240 }, wrapup_s: 10 },
  };
}

async function run(variant: "erlang" | "realistic"): Promise<[string, string][]> {
  const scenario = day(variant);
  const cpu = process.cpuUsage();
  const started = performance.now();
  const { summary, steps } = await runHeadless(scenario);
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const handleS = meanOf(scenario.agents.handle_time) + scenario.agents.wrapup_s + scenario.agents.ring_delay_s;
  const lambda = RATE_PER_HOUR / 3600;
  return [
    [`${variant}: wall time`, `${(wallMs / 1000).toFixed(2)} s (target < 30 s), CPU ${((used.user + used.system) / 1000 / 1000).toFixed(2)} s, ${steps} clock steps`],
    [`${variant}: callers`, `${summary.offered} offered, ${summary.answered} answered, ${summary.abandoned} abandoned (${summary.abandoned_percent ?? 0}%), ${summary.timed_out} timed out`],
    [`${variant}: service level`, `${summary.service_level.percent ?? 0}% answered within ${THRESHOLD_S} s; ASA ${summary.average_speed_of_answer_s ?? 0} s; longest wait ${summary.longest_wait_s ?? 0} s`],
    [`${variant}: handle time`, `measured AHT ${summary.average_handle_time_s ?? 0} s (talk ${summary.average_talk_s ?? 0} s + wrap-up ${scenario.agents.wrapup_s} s); measured offered load ${summary.offered_load_erlangs} erlangs`],
    [`${variant}: estimate`, estimate(variant, lambda, handleS, summary.offered / (HOURS * 3600), summary.average_handle_time_s ?? handleS)],
    [
      `${variant}: Erlang-C inputs`,
      `lambda ${lambda.toFixed(5)} calls/s (${RATE_PER_HOUR}/h), mean handle ${handleS} s (talk ${meanOf(scenario.agents.handle_time)} + wrap-up ${scenario.agents.wrapup_s} + ring ${scenario.agents.ring_delay_s}), offered load ${(lambda * handleS).toFixed(2)} erlangs, ${AGENTS} agents, T ${THRESHOLD_S} s`,
    ],
  ];
}

/**
 * What queueing theory expects of the same day, at the nominal rates and at the ones the run
 * drew: Erlang C where callers never give up, Erlang A with the personas' patience otherwise.
 */
function estimate(variant: "erlang" | "realistic", lambda: number, handleS: number, drawnLambda: number, drawnHandleS: number): string {
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  const at = (rate: number, handle: number) => {
    if (variant === "erlang") {
      const traffic = { arrivalRate: rate, handleTime: handle };
      return `Erlang C ${pct(erlangCServiceLevel(AGENTS, traffic, THRESHOLD_S))} within ${THRESHOLD_S} s, ASA ${erlangCAsa(AGENTS, traffic).toFixed(1)} s`;
    }
    const a = erlangA(AGENTS, { arrivalRate: rate, handleTime: handle, patience: PATIENCE_S }, THRESHOLD_S);
    return `Erlang A ${pct(a.serviceLevel)} within ${THRESHOLD_S} s, ${pct(a.abandonProbability)} abandon`;
  };
  return `nominal: ${at(lambda, handleS)}; at the drawn rate and handle time: ${at(drawnLambda, drawnHandleS)}`;
}

const rows = [...(await run("erlang")), ...(await run("realistic"))];
report(`training headless: an ${HOURS}-hour day, ${AGENTS} simulated agents, about ${CALLERS} callers`, rows);
