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

/**
 * Sums the first `count` frames into `out` (all of them by default), saturating at the 16-bit
 * limits instead of wrapping.
 */
export function mixInto(out: Int16Array, frames: readonly Int16Array[], count = frames.length): Int16Array {
  // Most listeners hear one other member (a two-party call): a copy, no arithmetic.
  if (count === 0) return out.fill(0);
  // Indexed, not destructured: destructuring walks an iterator.
  const first = frames[0];
  const second = frames[1];
  if (count === 1) {
    // A view only for a frame longer than the output (a view is an object per call).
    out.set(first.length === out.length ? first : first.subarray(0, out.length));
    return out;
  }
  for (let i = 0; i < out.length; i++) {
    let sum = first[i] + second[i];
    for (let f = 2; f < count; f++) sum += frames[f][i];
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
  /** What the member said at the tick being mixed (its input's frame, or silence when muted). */
  said: Int16Array;
  /** Set on leave: a mix under way passes over it. */
  left: boolean;
}

export class Mixer {
  readonly #members = new Map<string, MemberState>();
  readonly #taps = new Set<MixerTap>();
  // The members and taps as arrays, made again on each change, walked by index each tick: an
  // iterator of a Map or Set is an object, and a mix walked the members 2 + n times.
  #memberList: MemberState[] = [];
  #tapList: MixerTap[] = [];
  // Each tick's frames by member, overwritten in place tick after tick (a Map's clear() makes a
  // new table, two per bridge per tick): a member's entries go when it leaves.
  readonly #inputs = new Map<string, Int16Array>();
  readonly #outputs = new Map<string, Int16Array>();
  /**
   * What one listener hears this tick, its first #heard entries refilled for each listener: no
   * array per listener per tick (and never shortened: `length = 0` gives up the array's storage,
   * so the next push makes new storage).
   */
  readonly #audible: Int16Array[] = [];
  #lastTick = -1;
  #tapsChanged: (() => void) | undefined;

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
    this.#members.set(id, { id, role, input, output: new Int16Array(FRAME_SAMPLES), said: silentFrame(), left: false });
    this.#memberList = [...this.#members.values()];
    const members = this.#members;
    return {
      get ended() {
        return !members.has(id);
      },
      read: (tick: number) => this.#outputFor(id, tick),
    };
  }

  leave(id: string): void {
    const member = this.#members.get(id);
    if (member) member.left = true;
    this.#members.delete(id);
    this.#memberList = [...this.#members.values()];
    this.#inputs.delete(id);
    this.#outputs.delete(id);
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
    this.#tapList = [...this.#taps];
    this.#tapsChanged?.();
    return () => {
      if (!this.#taps.delete(tap)) return;
      this.#tapList = [...this.#taps];
      this.#tapsChanged?.();
    };
  }

  /** Whether a tap (a recorder) sees this mixer's frames: its members' decoded audio is needed. */
  get tapped(): boolean {
    return this.#taps.size > 0;
  }

  /** Called after each tap added or removed (one watcher: the bridge that owns the mixer); undefined stops it. */
  watchTaps(changed: (() => void) | undefined): void {
    this.#tapsChanged = changed;
  }

  #outputFor(id: string, tick: number): Int16Array {
    if (tick !== this.#lastTick) this.#mix(tick);
    return this.#members.get(id)?.output ?? silentFrame();
  }

  #mix(tick: number): void {
    this.#lastTick = tick;
    const mutes = this.mutes?.any ? this.mutes : undefined;
    const members = this.#memberList;
    for (let i = 0; i < members.length; i++) {
      const m = members[i];
      if (m.left) continue;
      const frame = m.input.read(tick);
      // A muted voice is read all the same (its leg's receive buffer drains), and passed on as silence.
      m.said = mutes?.muted(m.id, "voice") ? silentFrame() : frame;
      this.#inputs.set(m.id, m.said);
    }
    const audible = this.#audible;
    for (let l = 0; l < members.length; l++) {
      const listener = members[l];
      if (listener.left) continue;
      if (mutes?.muted(listener.id, "hearing")) {
        this.#outputs.set(listener.id, listener.output.fill(0));
        continue;
      }
      let heard = 0;
      for (let k = 0; k < members.length; k++) {
        const speaker = members[k];
        if (!speaker.left && hears(listener, speaker)) audible[heard++] = speaker.said;
      }
      mixInto(listener.output, audible, heard);
      this.#outputs.set(listener.id, listener.output);
    }
    // The frames are other objects' (receive buffers'): not kept past the tick.
    audible.fill(silentFrame());
    for (let i = 0; i < members.length; i++) members[i].said = silentFrame();
    const taps = this.#tapList;
    // A tap removed by an earlier one in this tick is not called (as with the Set's own walk).
    for (let i = 0; i < taps.length; i++) if (this.#taps.has(taps[i])) taps[i](tick, this.#inputs, this.#outputs);
  }
}

function checkRole(id: string, role: MemberRole): void {
  if (role.kind === "monitor" && role.mode === "whisper" && role.target === undefined) {
    throw new Error(`${id}: whisper needs a target (the member who hears the supervisor)`);
  }
}
