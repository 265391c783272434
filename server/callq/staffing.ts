// The staffing estimate of a queue: how many agents the recent arrivals and handle times need to
// reach the queue's service level, by Erlang C, and by Erlang A where callers' patience can be
// estimated (somebody abandoned in the window). Estimates, labelled so: the models assume random
// arrivals and exponential handle times and patience.
import { erlangA, erlangAAgents, erlangCAgents, erlangCServiceLevel, offeredLoad } from "./erlang.js";
import { meanPatience, round, type IntervalFigures } from "./intervals.js";
import type { QueueConfig } from "./queue-config.js";

/** Inputs a supervisor may set instead of the measured ones (what-if). */
export interface WhatIf {
  calls_per_hour?: number;
  /** Seconds, wrap-up included. */
  handle_time?: number;
  target_percent?: number;
  answered_within_s?: number;
  /** Seconds; 0 or absent: measured, when there is anything to measure. */
  patience?: number;
}

export interface StaffingEstimate {
  /** Always true: the figures below are a model's, not a count. */
  estimate: true;
  window_minutes: number;
  calls_per_hour: number;
  /** Seconds from answer to hang-up plus the queue's wrap-up; null with no call to measure. */
  handle_time: number | null;
  answered_within_s: number;
  target_percent: number;
  /** Mean patience, seconds; null without abandonments to estimate it from. */
  patience: number | null;
  /** Erlangs: the agents the calls would keep busy all the time. */
  offered_load: number | null;
  /** Erlang C's agents for the target; null without a handle time. */
  agents_needed: number | null;
  /** Erlang A's agents for the target (callers giving up); null without patience. */
  agents_needed_with_abandonment: number | null;
  /** Percent answered in time the Ready agents would give (Erlang A with patience, else C). */
  service_level_with_ready: number | null;
  logged_in: number;
  ready: number;
}

export interface StaffingInput {
  /** The figures of the window's intervals. */
  window: IntervalFigures;
  /** The day's figures: their handle time stands in when the window ended no call. */
  day: IntervalFigures;
  /** Seconds the window covers. */
  windowS: number;
  minutes: number;
  config: Pick<QueueConfig, "serviceLevelS" | "serviceLevelTarget" | "wrapupS">;
  loggedIn: number;
  ready: number;
  whatIf: WhatIf;
}

export function staffingEstimate(input: StaffingInput): StaffingEstimate {
  const { window, day, whatIf, config } = input;
  const callsPerHour = whatIf.calls_per_hour ?? (window.offered * 3600) / input.windowS;
  // Unrounded: calls shorter than a twentieth of a second on average would round to no handle
  // time at all, and so to no estimate (the figure shown is rounded below).
  const measured = window.handled > 0 ? window.handle_sum / window.handled : day.handled > 0 ? day.handle_sum / day.handled : undefined;
  const handleTime = whatIf.handle_time ?? (measured === undefined ? undefined : measured + config.wrapupS);
  const thresholdS = whatIf.answered_within_s ?? config.serviceLevelS;
  const targetPercent = whatIf.target_percent ?? config.serviceLevelTarget;
  const patience = whatIf.patience !== undefined && whatIf.patience > 0 ? whatIf.patience : meanPatience(window);
  const base = {
    estimate: true as const,
    window_minutes: input.minutes,
    calls_per_hour: round(callsPerHour),
    handle_time: handleTime === undefined ? null : round(handleTime),
    answered_within_s: thresholdS,
    target_percent: targetPercent,
    patience: patience === undefined ? null : round(patience),
    logged_in: input.loggedIn,
    ready: input.ready,
  };
  if (handleTime === undefined || handleTime <= 0) {
    return { ...base, offered_load: null, agents_needed: null, agents_needed_with_abandonment: null, service_level_with_ready: null };
  }
  const traffic = { arrivalRate: callsPerHour / 3600, handleTime };
  const target = targetPercent / 100;
  const impatient = patience === undefined ? undefined : { ...traffic, patience };
  const withReady = impatient ? erlangA(input.ready, impatient, thresholdS).serviceLevel : erlangCServiceLevel(input.ready, traffic, thresholdS);
  return {
    ...base,
    offered_load: Math.round(offeredLoad(traffic) * 100) / 100,
    agents_needed: erlangCAgents(traffic, thresholdS, target),
    agents_needed_with_abandonment: impatient ? erlangAAgents(impatient, thresholdS, target) : null,
    service_level_with_ready: traffic.arrivalRate <= 0 ? null : round(100 * withReady),
  };
}
