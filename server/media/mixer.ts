// A bridge's audio: once per tick, every member hears the saturated sum of what is audible to it
// (the other parties, plus supervisors as their monitor mode allows), and taps such as a recorder
// see the same frames.

import type { MonitorMode } from "../monitor-mode.js";
import { FRAME_SAMPLES, silentFrame, type AudioSource } from "./audio-frame.js";
import type { LegMutes } from "./leg-mutes.js";

export type { MonitorMode };

export type MemberRole = { kind: "party" } | { kind: "monitor"; mode: MonitorMode; target?: string };

export interface Member {
  readonly id: string;
  readonly role: MemberRole;
}

/** Sees each tick's frames: what every member said (input) and what each hears (output). */
export type MixerTap = (tick: number, input: ReadonlyMap<string, Int16Array>, output: ReadonlyMap<string, Int16Array>) => void;

/** Whether `listener` hears `speaker` under the members' roles. */
export function hears(listener: Member, speaker: Member): boolean {
  if (listener.id === speaker.id) return false;
  const role = speaker.role;
  if (role.kind === "party") return true;
  switch (role.mode) {
    case "eavesdrop":
      return false;
    case "whisper":
      return listener.id === role.target;
    case "barge":
      return listener.role.kind === "party";
  }
}

/** Sums frames into `out`, saturating at the 16-bit limits instead of wrapping. */
export function mixInto(out: Int16Array, frames: readonly Int16Array[]): Int16Array {
  // Most listeners hear one other member (a two-party call): a copy, no arithmetic.
  if (frames.length === 0) return out.fill(0);
  const [first, second] = frames;
  if (frames.length === 1) {
    out.set(first.subarray(0, out.length));
    return out;
  }
  for (let i = 0; i < out.length; i++) {
    let sum = first[i] + second[i];
    for (let f = 2; f < frames.length; f++) sum += frames[f][i];
    out[i] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
  }
  return out;
}

interface MemberState extends Member {
  role: MemberRole;
  /** What the member says: its leg's received audio. */
  input: AudioSource;
  /** What the member hears, rebuilt each tick. */
  output: Int16Array;
}

export class Mixer {
  readonly #members = new Map<string, MemberState>();
  readonly #taps = new Set<MixerTap>();
  readonly #inputs = new Map<string, Int16Array>();
  readonly #outputs = new Map<string, Int16Array>();
  #lastTick = -1;

  /** `mutes`: legs whose audio the engine holds back one way (training's one-way audio fault). */
  constructor(private readonly mutes?: LegMutes) {}

  get members(): Member[] {
    return [...this.#members.values()].map(({ id, role }) => ({ id, role }));
  }

  /**
   * Adds a member whose voice is `input` (a leg's received audio); returns the source the
   * member's leg should play: what the member hears.
   */
  join(id: string, input: AudioSource, role: MemberRole = { kind: "party" }): AudioSource {
    if (this.#members.has(id)) throw new Error(`${id} is already in this bridge`);
    checkRole(id, role);
    this.#members.set(id, { id, role, input, output: new Int16Array(FRAME_SAMPLES) });
    const members = this.#members;
    return {
      get ended() {
        return !members.has(id);
      },
      read: (tick: number) => this.#outputFor(id, tick),
    };
  }

  leave(id: string): void {
    this.#members.delete(id);
  }

  /** Switches a supervisor between eavesdrop, whisper and barge, effective from the next tick. */
  setMonitor(id: string, mode: MonitorMode, target?: string): void {
    const member = this.#members.get(id);
    if (member?.role.kind !== "monitor") throw new Error(`${id} is not a monitor in this bridge`);
    const role: MemberRole = { kind: "monitor", mode, target: target ?? member.role.target };
    checkRole(id, role);
    member.role = role;
  }

  /** Adds a tap (a recorder); returns the function that removes it. */
  tap(tap: MixerTap): () => void {
    this.#taps.add(tap);
    return () => this.#taps.delete(tap);
  }

  #outputFor(id: string, tick: number): Int16Array {
    if (tick !== this.#lastTick) this.#mix(tick);
    return this.#members.get(id)?.output ?? silentFrame();
  }

  #mix(tick: number): void {
    this.#lastTick = tick;
    this.#inputs.clear();
    this.#outputs.clear();
    const mutes = this.mutes?.any ? this.mutes : undefined;
    for (const m of this.#members.values()) {
      const frame = m.input.read(tick);
      // A muted voice is read all the same (its leg's receive buffer drains), and passed on as silence.
      this.#inputs.set(m.id, mutes?.muted(m.id, "voice") ? silentFrame() : frame);
    }
    const audible: Int16Array[] = [];
    for (const listener of this.#members.values()) {
      audible.length = 0;
      if (mutes?.muted(listener.id, "hearing")) {
        this.#outputs.set(listener.id, listener.output.fill(0));
        continue;
      }
      for (const speaker of this.#members.values()) {
        const frame = this.#inputs.get(speaker.id);
        if (frame && hears(listener, speaker)) audible.push(frame);
      }
      mixInto(listener.output, audible);
      this.#outputs.set(listener.id, listener.output);
    }
    for (const tap of this.#taps) tap(tick, this.#inputs, this.#outputs);
  }
}

function checkRole(id: string, role: MemberRole): void {
  if (role.kind === "monitor" && role.mode === "whisper" && role.target === undefined) {
    throw new Error(`${id}: whisper needs a target (the member who hears the supervisor)`);
  }
}
