// The training API's answers as the server writes them and the console reads them, written once:
// server/training/scorecard.ts and server/api/training-runs.ts build them, renderer/api/training.ts
// and the tests read them. Types and plain data only, importing nothing, so both sides may import
// it (eslint.config.js: contract/ reaches neither server/ nor renderer/).

export type RunStatus = "running" | "paused" | "ended";

/** Every fault a scenario's timeline or the trainer's hand can inject; a live run applies them all. */
export const FAULT_KINDS = ["drop_registration", "one_way_audio", "webhook_failure", "text_undelivered", "text_stop", "burst"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface ScorecardTargets {
  service_level: { answered_within_s: number; percent: number };
  handle_time_s: number;
  /** Seconds from a persona's text to the trainee's reply; absent: no target. */
  text_response_s?: number;
}

export interface CardFigures {
  offered: number;
  answered: number;
  missed: number;
  /** Callers who hung up while this person's phone rang for them. */
  abandoned_while_ringing: number;
  average_speed_of_answer_s: number | null;
  talk_s: number;
  hold_s: number;
  wrapup_s: number;
  /** (talk + wrap-up) / answered. */
  average_handle_time_s: number | null;
  handle_time_met: boolean | null;
  transfers: number;
  digits_collected: number;
  /** Personas' texts to the person's texting number, and those they replied to. */
  texts_received: number;
  texts_answered: number;
  /** From a persona's text to the person's first reply to its number, over the texts answered. */
  average_text_response_s: number | null;
  /** Against targets.text_response_s; null without that target or without a text answered. */
  text_response_met: boolean | null;
}

export interface PersonCard extends CardFigures {
  user_id: string;
  name: string;
  simulated: boolean;
}

export interface RunCard {
  callers: number;
  offered: number;
  answered: number;
  abandoned: number;
  timed_out: number;
  abandoned_while_ringing: number;
  service_level: { answered_within_s: number; target_percent: number; percent: number | null; met: boolean | null };
  average_speed_of_answer_s: number | null;
  digits_collected: number;
  texts: number;
  texts_answered: number;
  average_text_response_s: number | null;
  text_response_met: boolean | null;
}

/** GET .../training_runs/{id}/scorecard. */
export interface Scorecard {
  run_id: string;
  scenario_name: string;
  status: RunStatus;
  targets: ScorecardTargets;
  run: RunCard;
  people: PersonCard[];
}

/** What every answer about one run says of it first. */
export interface RunHeader {
  run_id: string;
  scenario_name: string;
  seed: number;
  status: RunStatus;
  /** Gregorian seconds, as the server's other times. */
  started: number;
  ended: number | null;
}

/** A row of GET .../users/{user_id}/training_scorecards: one run the user took calls in, newest first. */
export interface OwnScorecard extends RunHeader {
  targets: ScorecardTargets;
  run: RunCard;
  /** The user's own row of the run's scorecard. */
  person: PersonCard;
}

/** One step of a recipient's availability in a run, at its run time: what the queue engine reported. */
export interface ReplayAgentStep {
  at_s: number;
  user_id: string;
  /** The recipient event's name: login, ready, offer, delivered, wrapup, away, logout, ... */
  name: string;
  /** The state the event left the recipient in (Ready, Call-Offer, On-A-Call, Wrap-Up, Away, ...), when it said. */
  availability_state: string | null;
}

/**
 * GET .../training_runs/{id}/replay: what a replay of the run needs, all of it stored: the run's
 * timeline (run seconds) and its recipients' steps put on the same run time.
 */
export interface RunReplay extends RunHeader {
  duration_s: number;
  /** How long the run ran (run time: pauses do not count). */
  run_seconds: number;
  /** Everyone who was offered a call or logged in during the run, trainees first. */
  people: { user_id: string; name: string; simulated: boolean }[];
  /** The run's timeline entries, in order (caller_arrived, caller_waiting, caller_answered, ...). */
  timeline: ({ name: string; at_s: number } & Record<string, unknown>)[];
  agent_steps: ReplayAgentStep[];
}
