// What a `call_recording` setting (on a callflow, a device or a user) says about one call: Kazoo's
// matrix `{inbound|outbound|any: {onnet|offnet|any: {enabled, record_min_sec, time_limit}}}`.
//
// Supported: `enabled` at any level of the matrix, so `{enabled:true}` alone records every call and
// `{inbound:{enabled:true}}` every call in; the most specific level that says `enabled` decides,
// and an explicit `enabled:false` there refuses. `record_min_sec` (shorter recordings are dropped)
// and `time_limit` (seconds; recording stops, the call goes on) are honoured. Not supported:
// `format` (always WAV), `url` (always stored as an attachment), `record_sample_rate` (8 kHz),
// `record_on_answer` (recording always starts when the call is bridged).

/** Seen from the endpoint: `inbound` = a call to it, `outbound` = a call it makes. */
export type RecordingDirection = "inbound" | "outbound";

/** Where the other party is: a device of the account (`onnet`) or outside it (`offnet`). */
export type RecordingNetwork = "onnet" | "offnet";

export interface RecordingLimits {
  /** Recordings shorter than this are not kept. */
  minMs: number;
  /** Recording stops after this long; undefined: until the call is unbridged. */
  maxMs: number | undefined;
}

/** A setting's verdict: record with these limits, refuse explicitly, or say nothing (undefined). */
export type RecordingVerdict = RecordingLimits | "refused" | undefined;

type Settings = Record<string, unknown>;

function settingsAt(value: unknown, key?: string): Settings | undefined {
  const at = key === undefined ? value : typeof value === "object" && value !== null ? (value as Settings)[key] : undefined;
  return typeof at === "object" && at !== null && !Array.isArray(at) ? (at as Settings) : undefined;
}

function seconds(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined;
}

/** What `callRecording` says about a call in `direction` whose other party is on `network`. */
export function recordingVerdict(callRecording: unknown, direction: RecordingDirection, network: RecordingNetwork): RecordingVerdict {
  const top = settingsAt(callRecording);
  if (!top) return undefined;
  const sides = [settingsAt(top, direction), settingsAt(top, "any")];
  // Most specific first: direction and network, direction, then the top level alone.
  const candidates = [
    ...sides.flatMap((side) => [settingsAt(side, network), settingsAt(side, "any")]),
    ...sides,
    top,
  ];
  for (const candidate of candidates) {
    if (!candidate || typeof candidate.enabled !== "boolean") continue;
    if (!candidate.enabled) return "refused";
    const limit = seconds(candidate.time_limit);
    return { minMs: (seconds(candidate.record_min_sec) ?? 0) * 1000, maxMs: limit === undefined ? undefined : limit * 1000 };
  }
  return undefined;
}
