// DTMF carried in SIP INFO bodies, as phones send it: application/dtmf-relay (`Signal=5`,
// `Duration=160`) and application/dtmf (the digit alone). Anything else is not a digit.
import type { InfoDtmf } from "./call-signalling.js";

export const DTMF_INFO_TYPES: readonly string[] = ["application/dtmf-relay", "application/dtmf"];

const DIGIT = /^[0-9*#A-D]$/;
/** Some phones send the RFC 4733 event number for * and # instead of the character. */
const EVENT_DIGITS: Record<string, string> = { "10": "*", "11": "#" };

/** The digit in an INFO body of one of DTMF_INFO_TYPES, or null when there is none. */
export function parseDtmfInfo(mediaType: string, body: string): InfoDtmf | null {
  if (mediaType === "application/dtmf") return digitOf(body.trim());
  if (mediaType !== "application/dtmf-relay") return null;
  const fields = new Map<string, string>();
  for (const line of body.split(/\r?\n/)) {
    const eq = line.indexOf("=");
    if (eq > 0) fields.set(line.slice(0, eq).trim().toLowerCase(), line.slice(eq + 1).trim());
  }
  const dtmf = digitOf(fields.get("signal") ?? "");
  if (!dtmf) return null;
  const duration = fields.get("duration");
  if (duration !== undefined && /^\d{1,6}$/.test(duration)) dtmf.durationMs = Number(duration);
  return dtmf;
}

function digitOf(text: string): InfoDtmf | null {
  const digit = EVENT_DIGITS[text] ?? text.toUpperCase();
  return DIGIT.test(digit) ? { digit } : null;
}
