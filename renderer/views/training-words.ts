// How the training pages (the trainee's scorecards, the printable report, the replay) put figures
// and times in words, so each says them the same way.
import { gregorianToMs } from "../api/gregorian.js";

export function figure(value: number | null, unit = ""): string {
  return value === null ? "—" : `${value}${unit}`;
}

export function when(gregorianSeconds: number | null): string {
  return gregorianSeconds === null ? "—" : new Date(gregorianToMs(gregorianSeconds)).toLocaleString();
}

/** A figure against its target: "95 % (target 80 %: met)"; `short` is the word when it falls short. */
export function againstTarget(value: number | null, target: number, met: boolean | null, unit = "", short = "missed"): string {
  const verdict = met === null ? "" : met ? ": met" : `: ${short}`;
  return `${figure(value, unit)} (target ${target}${unit}${verdict})`;
}

/**
 * Personas' texts and the replies to them: "2 of 3, 41 s to reply (target 60 s: met)"; "—" when no
 * persona texted. `targetS` is the scenario's text_response_s, when it has one.
 */
export function textsAnswered(received: number, answered: number, responseS: number | null, met: boolean | null, targetS: number | undefined): string {
  if (received === 0) return "—";
  const reply = responseS === null ? "" : targetS === undefined ? `, ${responseS} s to reply` : `, ${againstTarget(responseS, targetS, met, " s", "slow")} to reply`;
  return `${answered} of ${received}${reply}`;
}

/** A simulated caller's outcome in words (the run's callers table, the replay). */
export const CALLER_OUTCOMES: Readonly<Record<string, string>> = {
  answered: "answered",
  abandoned: "abandoned",
  timeout: "timed out",
  hung_up: "hung up",
  not_placed: "not placed",
  stopped: "ended by the stop",
  texted: "texted instead",
};
