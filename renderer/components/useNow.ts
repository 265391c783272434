// A clock reading that re-renders its component every `everyMs`, for timers on screen (call
// durations, retry countdowns). Views read the system clock; the slices' logic gets it injected.
import { useEffect, useState } from "react";
import { systemClock } from "../clock.js";

export function useNow(everyMs = 1000, active = true): number {
  const [now, setNow] = useState(() => systemClock.now());
  useEffect(() => {
    if (!active) return undefined;
    setNow(systemClock.now());
    const timer = setInterval(() => setNow(systemClock.now()), everyMs);
    return () => clearInterval(timer);
  }, [everyMs, active]);
  return now;
}

/** m:ss, or h:mm:ss from an hour on. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, "0");
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, "0")}:${seconds}` : `${minutes}:${seconds}`;
}
