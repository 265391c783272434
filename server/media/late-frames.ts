// Which frames a leg still sends when its clock delivers a tick late. After a stall the clock
// delivers every owed tick (up to its catch-up limit, frame-clock.ts), and a leg sends each one's
// frame, in order: the far end's receive buffer absorbs the burst (the server's FIFOs hold 16
// frames and play a lasting backlog out faster: receive-buffer.ts) and the audio is played late
// rather than lost. Only a frame later than the bound is not sent, counted as lost
// (LegCounters.staleFramesSkipped): by then a browser's jitter buffer has concealed its time, and
// a longer burst would teach it to wait that much longer for every frame after it.

import { FRAME_MS } from "./audio-frame.js";

/**
 * The latest a frame is still sent, after its tick's due time: five frames (100 ms). A stall of
 * up to 100 ms is sent whole; one of 150 ms loses its first two or three frames, not all seven.
 */
export const MAX_SEND_LATENESS_MS = 5 * FRAME_MS;

/** Whether a frame whose tick runs `lateMs` after its due time is too late to send. */
export function tooLateToSend(lateMs: number, maxLatenessMs = MAX_SEND_LATENESS_MS): boolean {
  return lateMs > maxLatenessMs;
}
