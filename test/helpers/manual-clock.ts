// The console's slices are tested on the server's own ManualClock (server/clock-control.ts): it
// fits the console's Clock (`now`, `after`), and `advance(ms)` runs every timer that falls due, in
// order, letting its work settle before the next. One hand-driven clock for both sides.
import { ManualClock } from "../../server/clock-control.js";

export { ManualClock };

export function manualClock(start?: number): ManualClock {
  return new ManualClock(start);
}
