// The unit every media piece trades in: 20 ms of 8 kHz mono 16-bit PCM (160 samples), and the
// AudioSource contract that players, bridges and legs use to hand such frames to each other.

export const SAMPLE_RATE = 8000;
export const FRAME_MS = 20;
export const FRAME_SAMPLES = (SAMPLE_RATE * FRAME_MS) / 1000;

export interface AudioSource {
  /**
   * The frame for clock tick `tick`: exactly FRAME_SAMPLES samples, silence once ended. The
   * caller must not keep or change it. Sources shared by several readers (a bridge) use the
   * tick to compute each frame once.
   */
  read(tick: number): Int16Array;
  /** True once a finite source has nothing more to play; it then reads as silence. */
  readonly ended: boolean;
}

const SILENCE = new Int16Array(FRAME_SAMPLES);

/** A shared all-zero frame; never write into it. */
export function silentFrame(): Int16Array {
  return SILENCE;
}

/** The source that is always silent and never ends: what a leg plays when given nothing. */
export const silence: AudioSource = { read: () => SILENCE, ended: false };
