// Why a call did not connect, in the words an agent reads: from the SIP final response the phone
// got (the dock, at once) and from a call record's hangup cause and code (the history).
import type { CallFailure } from "../phone/phone-line.js";

/**
 * The words for a refused outgoing call; null for a call the agent cancelled (487), which did
 * not fail. 480 is both "nobody answered" and "nothing to ring": the server's reason phrase
 * ("No Answer") tells them apart, as FreeSWITCH's cause names do in the record.
 */
export function callFailureText(failure: CallFailure): string | null {
  const { code, reason } = failure;
  if (code === 487) return null;
  if (code === 480) return /no answer/i.test(reason) ? "No answer" : "Unavailable";
  switch (code) {
    case 404:
    case 484:
    case 485:
    case 604:
      return "No such number";
    case 486:
    case 600:
      return "Busy";
    case 403:
    case 603:
      return "Declined";
    case 433:
      return "Anonymous calls refused";
    case 408:
      return "No answer";
    case 488:
    case 606:
      return "No common audio format";
    case 501:
      return "Not available on this server";
    case 500:
    case 502:
    case 503:
    case 504:
      return "Server could not connect the call";
  }
  return `Failed (${code}${reason ? ` ${reason}` : ""})`;
}

const CAUSE_TEXT: Record<string, string> = {
  USER_BUSY: "Busy",
  UNALLOCATED_NUMBER: "No such number",
  CALL_REJECTED: "Declined",
  NO_ANSWER: "No answer",
  RECOVERY_ON_TIMER_EXPIRE: "No answer",
  SUBSCRIBER_ABSENT: "Unavailable",
  NO_USER_RESPONSE: "Unavailable",
  ORIGINATOR_CANCEL: "Cancelled",
  INCOMPATIBLE_DESTINATION: "No common audio format",
  SERVICE_NOT_IMPLEMENTED: "Not available on this server",
  NORMAL_TEMPORARY_FAILURE: "Server could not connect the call",
  SYSTEM_SHUTDOWN: "Server restarted",
  MEDIA_TIMEOUT: "Audio lost",
};

/** A call record's outcome when it was not answered: its cause, else its `sip:NNN` code. */
export function recordFailureText(hangupCause: string, hangupCode: string): string | null {
  const byCause = CAUSE_TEXT[hangupCause];
  if (byCause !== undefined) return byCause;
  const code = /^sip:(\d{3})$/.exec(hangupCode)?.[1];
  return code === undefined ? null : callFailureText({ code: Number(code), reason: "" });
}
