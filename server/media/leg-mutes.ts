// Legs a bridge passes no audio for, one way: training's one-way audio fault. A leg's voice muted
// is heard by nobody in its bridge; its hearing muted, it hears silence. The call stays up: this is
// a silence, not a dropped leg. Mixers read it every tick by member id (a channel's call id), so a
// leg muted before it joins a bridge is muted there from its first tick.

export type MuteDirection = "voice" | "hearing";

export class LegMutes {
  /** How many mutes hold each leg's voice or hearing: overlapping faults end one at a time. */
  readonly #held: Record<MuteDirection, Map<string, number>> = { voice: new Map(), hearing: new Map() };
  readonly #listeners = new Set<() => void>();

  /** Calls `listener` after every mute and release (a forwarding bridge hands its audio back to the mixer); returns the unsubscriber. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) listener();
  }

  /** Mutes the leg one way until the function returned is called (once; later calls do nothing). */
  mute(legId: string, direction: MuteDirection): () => void {
    const held = this.#held[direction];
    held.set(legId, (held.get(legId) ?? 0) + 1);
    this.#changed();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (held.get(legId) ?? 1) - 1;
      if (left > 0) held.set(legId, left);
      else held.delete(legId);
      this.#changed();
    };
  }

  muted(legId: string, direction: MuteDirection): boolean {
    return this.#held[direction].has(legId);
  }

  /** Whether any leg is muted at all: the mixers' per-tick fast path. */
  get any(): boolean {
    return this.#held.voice.size > 0 || this.#held.hearing.size > 0;
  }
}
