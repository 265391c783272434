// A simulated caller's script: the steps it takes once the call is answered, and how it behaves
// around them (patience while it waits for someone, talk time, patience on hold, asking for a
// supervisor). The API validates the document (server/api/sim.ts); server/sim/ plays it.
import type { SpokenLine } from "./speech.js";

export type ScriptStep =
  /** Says a line of text: rendered speech, or `media` (a media reference) when it cannot be. */
  | { kind: "say"; line: SpokenLine; media?: string }
  /** Plays a media reference as the caller's voice: the trainer's recording, a tone. */
  | { kind: "play"; media: string }
  /** Pauses, on the server's clock. */
  | { kind: "wait"; seconds: number }
  /**
   * Answers a prompt with RFC 4733 digits: once the caller has heard a prompt (sound, then a
   * pause), or `afterS` seconds after the step starts on the server's clock, prompt or not.
   */
  | { kind: "digits"; digits: string; afterS?: number }
  | { kind: "hangup" };

export interface CallerScript {
  steps: ScriptStep[];
  /** Hangs up (abandons) when no one has answered it after this long: ringing, queued, in a menu. */
  patienceS?: number;
  /** Hangs up after this long talking (bridged, not on hold), when the script has no hangup step. */
  talkS?: number;
  /** Hangs up after this long on hold at once; absent: waits on hold however long. */
  holdPatienceS?: number;
  /** Says SUPERVISOR_LINE first, once someone answers. */
  asksForSupervisor: boolean;
  /** The caller's language and voice: what the supervisor line is said in. */
  language: string;
  voice?: string;
}

/**
 * Where the caller is: `calling` until someone first answers (ringing, queued, in a menu),
 * `talking` while bridged, `on_hold` while its party holds, `waiting` when unbridged after talking
 * (a transfer under way), `ended` once gone. Steps run from the engine's answer on; lines are
 * said only while `talking`.
 */
export type CallerPhase = "calling" | "talking" | "on_hold" | "waiting" | "ended";

/** Why a scripted caller hung up, when it did. */
export type CallerLeaving = "abandoned" | "hold_abandoned" | "script" | "talk_time";

export interface CallerProgress {
  phase: CallerPhase;
  /** The step under way (0-based); `steps` once every step is done. */
  step: number;
  steps: number;
  /** Set once the caller itself hung up, with why. */
  left?: CallerLeaving;
}
