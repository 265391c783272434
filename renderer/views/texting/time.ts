// Times in the texting pane: today's as hours and minutes, older ones with the date.

export function timeOf(epochMs: number, now = Date.now()): string {
  const at = new Date(epochMs);
  const sameDay = new Date(now).toDateString() === at.toDateString();
  return sameDay ? at.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : at.toLocaleString([], { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}
