// How a scripted simulated caller behaves: it runs its steps from the engine's answer on, says its
// lines only while someone is talking with it (a line cut by hold or a transfer is said again from
// its start once bridged again), abandons when its patience runs out before anyone answers, hangs
// up after its talk time or too long on hold, and answers prompts with digits. Waiting, patience
// and pauses follow the server's clock; the audio itself plays in real time on the frame clock.
import type { Cancel, Clock } from "../clock.js";
import { levelDbfs, type AudioSource } from "../media/index.js";
import type { CallerLeaving, CallerPhase, CallerProgress } from "./script.js";

/** A prepared step: lines are resolved to what the player opens before the call is placed. */
export type ConductStep =
  | { kind: "line"; uri: string }
  | { kind: "wait"; seconds: number }
  | { kind: "digits"; digits: string; afterS?: number }
  | { kind: "hangup" };

export interface ConductPlan {
  steps: ConductStep[];
  patienceS?: number;
  talkS?: number;
  holdPatienceS?: number;
}

/** What the conduct does to its call: the caller's leg and the engines around it. */
export interface ConductCall {
  clock: Clock;
  /** The media engine's frame clock: one call per 20 ms tick of real time. */
  ticks: { subscribe(listener: (tick: number) => void): () => void };
  /** What the caller hears, one frame per tick. */
  incoming: AudioSource;
  player(uri: string): Promise<AudioSource>;
  /** What the caller's leg sends (silence when given nothing). */
  play(source?: AudioSource): void;
  sendDtmf(digits: string): Promise<void>;
  hangup(): void;
  /** Background failures (a line that cannot be opened, DTMF that could not be sent). */
  onError(err: unknown, what: string): void;
}

/** A prompt is this loud at least (G.711 silence and comfort noise stay far below)... */
const PROMPT_DBFS = -45;
/** ...for at least this many frames (60 ms), and it is over after this many quiet frames (0.5 s). */
const PROMPT_MIN_FRAMES = 3;
const PROMPT_END_FRAMES = 25;
/**
 * A caller starts speaking this many frames (1 s) after someone starts talking with it, as a
 * person lets the agent greet them: it also lets a just-answered party's media come up, so the
 * start of the line is not lost while its ICE and DTLS connect.
 */
const REACTION_FRAMES = 50;

/** Promises that resolve on the next fire(), every waiter at once. */
class Wake {
  #waiters: (() => void)[] = [];

  wait(): Promise<void> {
    return new Promise((resolve) => this.#waiters.push(resolve));
  }

  fire(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const resolve of waiters) resolve();
  }
}

export class CallerConduct {
  readonly #plan: ConductPlan;
  readonly #call: ConductCall;
  readonly #onProgress: (progress: CallerProgress) => void;
  #phase: CallerPhase = "calling";
  #step = 0;
  #left: CallerLeaving | undefined;
  #started = false;
  /** Woken on every phase change: a line waiting for talk, a line cut short. */
  readonly #changed = new Wake();
  /** Set REACTION_FRAMES after the caller started talking with someone; cleared when talk stops. */
  #reacted = false;
  readonly #reactedWake = new Wake();
  #stopReaction: (() => void) | undefined;
  #patience: Cancel | undefined;
  #holdPatience: Cancel | undefined;
  #talkTimer: Cancel | undefined;
  #talkLeftMs: number | undefined;
  #talkSince: number | undefined;

  constructor(plan: ConductPlan, call: ConductCall, onProgress: (progress: CallerProgress) => void) {
    this.#plan = plan;
    this.#call = call;
    this.#onProgress = onProgress;
    this.#talkLeftMs = plan.talkS === undefined ? undefined : plan.talkS * 1000;
    if (plan.patienceS !== undefined) this.#patience = call.clock.after(plan.patienceS * 1000, () => this.#leave("abandoned"));
  }

  get progress(): CallerProgress {
    return { phase: this.#phase, step: this.#step, steps: this.#plan.steps.length, ...(this.#left === undefined ? {} : { left: this.#left }) };
  }

  /** The engine answered (a queue, a menu, a device): the steps start. */
  answered(): void {
    if (this.#started || this.#over()) return;
    this.#started = true;
    this.#run().catch((err: unknown) => this.#call.onError(err, "running the caller's script"));
  }

  /** The caller's channel joined a bridge: someone talks with it now. */
  bridged(): void {
    this.#patience?.();
    this.#patience = undefined;
    this.#enter("talking");
  }

  /** The caller's channel left its bridge and is still up (a transfer under way). */
  unbridged(): void {
    if (this.#phase === "talking" || this.#phase === "on_hold") this.#enter("waiting");
  }

  /** The caller's party put it on hold (true) or took it off (false). */
  partyHolding(on: boolean): void {
    if (on && this.#phase === "talking") this.#enter("on_hold");
    else if (!on && this.#phase === "on_hold") this.#enter("talking");
  }

  /** The call is over, however: every timer and step stops. */
  ended(): void {
    this.#enter("ended");
  }

  #enter(phase: CallerPhase): void {
    const from = this.#phase;
    if (from === phase || from === "ended") return;
    if (from === "talking") {
      this.#stopTalkTimer();
      this.#stopReaction?.();
      this.#stopReaction = undefined;
      this.#reacted = false;
    }
    if (from === "on_hold") {
      this.#holdPatience?.();
      this.#holdPatience = undefined;
    }
    this.#phase = phase;
    if (phase === "talking") {
      this.#startTalkTimer();
      this.#startReaction();
    }
    if (phase === "on_hold" && this.#plan.holdPatienceS !== undefined) {
      this.#holdPatience = this.#call.clock.after(this.#plan.holdPatienceS * 1000, () => this.#leave("hold_abandoned"));
    }
    if (phase === "ended") {
      this.#patience?.();
      this.#patience = undefined;
    }
    this.#changed.fire();
    this.#onProgress(this.progress);
  }

  #startReaction(): void {
    let frames = 0;
    const stop = this.#call.ticks.subscribe(() => {
      if (++frames < REACTION_FRAMES) return;
      stop();
      this.#stopReaction = undefined;
      this.#reacted = true;
      this.#reactedWake.fire();
    });
    this.#stopReaction = stop;
  }

  /** Talk time counts only while talking: hold and transfers do not use it up. */
  #startTalkTimer(): void {
    if (this.#talkLeftMs === undefined) return;
    this.#talkSince = this.#call.clock.now();
    this.#talkTimer = this.#call.clock.after(this.#talkLeftMs, () => this.#leave("talk_time"));
  }

  #stopTalkTimer(): void {
    if (this.#talkLeftMs === undefined || this.#talkSince === undefined) return;
    this.#talkTimer?.();
    this.#talkTimer = undefined;
    this.#talkLeftMs = Math.max(0, this.#talkLeftMs - (this.#call.clock.now() - this.#talkSince));
    this.#talkSince = undefined;
  }

  // Read through methods: the phase changes while a step awaits, which narrowing cannot see.
  #over(): boolean {
    return this.#phase === "ended";
  }

  #talking(): boolean {
    return this.#phase === "talking";
  }

  /** The caller hangs up by itself, saying why. */
  #leave(why: CallerLeaving): void {
    if (this.#over()) return;
    this.#left = why;
    this.#call.hangup();
  }

  async #run(): Promise<void> {
    const steps = this.#plan.steps;
    for (; this.#step < steps.length; this.#step++) {
      if (this.#over()) return;
      if (this.#step > 0) this.#onProgress(this.progress);
      const step = steps[this.#step];
      switch (step.kind) {
        case "line":
          await this.#say(step.uri);
          break;
        case "wait":
          await this.#sleep(step.seconds * 1000);
          break;
        case "digits":
          if (step.afterS === undefined) await this.#promptHeard();
          else await this.#sleep(step.afterS * 1000);
          if (this.#over()) return;
          await this.#call.sendDtmf(step.digits).catch((err: unknown) => this.#call.onError(err, "sending the caller's digits"));
          break;
        case "hangup":
          this.#step = steps.length;
          this.#leave("script");
          return;
      }
    }
    if (!this.#over()) this.#onProgress(this.progress);
  }

  /** Says a line while talking; a line cut short by hold or a transfer starts over once talking again. */
  async #say(uri: string): Promise<void> {
    for (;;) {
      while (!this.#talking() || !this.#reacted) {
        if (this.#over()) return;
        await Promise.race([this.#changed.wait(), this.#reactedWake.wait()]);
      }
      let source: AudioSource;
      try {
        source = await this.#call.player(uri);
      } catch (err) {
        this.#call.onError(err, "opening the caller's line");
        return;
      }
      if (!this.#talking()) continue;
      this.#call.play(source);
      const finished = await this.#untilEndedOrChange(source);
      if (!this.#over()) this.#call.play();
      if (finished) return;
    }
  }

  /** True once the source has played out; false when the phase changed first. */
  #untilEndedOrChange(source: AudioSource): Promise<boolean> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (value: boolean): void => {
        if (done) return;
        done = true;
        stop();
        resolve(value);
      };
      const stop = this.#call.ticks.subscribe(() => {
        if (source.ended) finish(true);
      });
      void this.#changed.wait().then(() => finish(false));
    });
  }

  /** Waits on the server's clock; cut short when the call ends. */
  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (): void => {
        done = true;
        resolve();
      };
      const cancel = this.#call.clock.after(ms, finish);
      const watch = (): void => {
        if (done) return;
        if (!this.#over()) {
          void this.#changed.wait().then(watch);
          return;
        }
        cancel();
        finish();
      };
      watch();
    });
  }

  /**
   * Resolves once the caller has heard a prompt end (sound, then half a second of quiet) or the
   * call ended. Sound is a run of at least PROMPT_MIN_FRAMES loud frames: a shorter one (a click,
   * a phone's blip, the 20 ms beep Chromium's fake microphone makes every 500 ms) is no prompt and
   * counts as quiet, so it neither starts a prompt nor keeps one from ending.
   */
  #promptHeard(): Promise<void> {
    return new Promise((resolve) => {
      let heard = false;
      let run = 0;
      let quiet = 0;
      const stop = this.#call.ticks.subscribe((tick) => {
        if (this.#over()) {
          stop();
          resolve();
          return;
        }
        if (levelDbfs(this.#call.incoming.read(tick)) > PROMPT_DBFS) {
          run += 1;
          if (run >= PROMPT_MIN_FRAMES) {
            heard = true;
            quiet = 0;
          }
          return;
        }
        // A loud run too short to be sound: its frames were quiet time after all.
        if (run > 0 && run < PROMPT_MIN_FRAMES) quiet += run;
        run = 0;
        if (heard && ++quiet >= PROMPT_END_FRAMES) {
          stop();
          resolve();
        }
      });
    });
  }
}
