// Why a call leg ended, in the words the hosted service reports (FreeSWITCH cause names), and the
// SIP code each goes with: `hangup_cause` and `hangup_code` of channel_destroy and of CDRs.

export type HangupCause =
  | "NORMAL_CLEARING"
  | "ORIGINATOR_CANCEL"
  | "USER_BUSY"
  | "NO_ANSWER"
  | "NO_USER_RESPONSE"
  | "SUBSCRIBER_ABSENT"
  | "CALL_REJECTED"
  | "UNALLOCATED_NUMBER"
  | "LOSE_RACE"
  | "INCOMPATIBLE_DESTINATION"
  | "RECOVERY_ON_TIMER_EXPIRE"
  | "NORMAL_TEMPORARY_FAILURE"
  | "SERVICE_NOT_IMPLEMENTED"
  | "MEDIA_TIMEOUT"
  | "SYSTEM_SHUTDOWN"
  | "BLIND_TRANSFER"
  | "ATTENDED_TRANSFER"
  | "PICKED_OFF"
  | "NORMAL_UNSPECIFIED";

/** The SIP response a cause is sent as when it ends a call before an answer. */
const SIP_CODE: Record<HangupCause, number> = {
  NORMAL_CLEARING: 200,
  ORIGINATOR_CANCEL: 487,
  USER_BUSY: 486,
  NO_ANSWER: 480,
  NO_USER_RESPONSE: 480,
  SUBSCRIBER_ABSENT: 480,
  CALL_REJECTED: 603,
  UNALLOCATED_NUMBER: 404,
  LOSE_RACE: 487,
  INCOMPATIBLE_DESTINATION: 488,
  RECOVERY_ON_TIMER_EXPIRE: 408,
  NORMAL_TEMPORARY_FAILURE: 503,
  SERVICE_NOT_IMPLEMENTED: 501,
  MEDIA_TIMEOUT: 408,
  SYSTEM_SHUTDOWN: 503,
  BLIND_TRANSFER: 200,
  ATTENDED_TRANSFER: 200,
  PICKED_OFF: 487,
  NORMAL_UNSPECIFIED: 480,
};

export function sipCodeOf(cause: HangupCause): number {
  return SIP_CODE[cause];
}

/**
 * The reason phrase a refusal carries where its code alone is ambiguous: 480 is sent both when
 * nothing could be rung and when nobody answered, and a phone shows the difference only from this.
 */
export function reasonPhraseOf(cause: HangupCause): string | undefined {
  return cause === "NO_ANSWER" ? "No Answer" : undefined;
}

/** The cause a final SIP response from a device stands for (FreeSWITCH's sip-to-cause table). */
export function causeOfSipCode(code: number): HangupCause {
  switch (code) {
    case 200:
      return "NORMAL_CLEARING";
    case 401:
    case 402:
    case 403:
    case 407:
    case 433:
    case 603:
      return "CALL_REJECTED";
    case 404:
    case 485:
    case 604:
      return "UNALLOCATED_NUMBER";
    case 408:
    case 504:
      return "RECOVERY_ON_TIMER_EXPIRE";
    case 480:
      return "NO_USER_RESPONSE";
    case 486:
    case 600:
      return "USER_BUSY";
    case 487:
      return "ORIGINATOR_CANCEL";
    case 488:
    case 606:
      return "INCOMPATIBLE_DESTINATION";
    case 501:
      return "SERVICE_NOT_IMPLEMENTED";
    case 500:
    case 503:
      return "NORMAL_TEMPORARY_FAILURE";
    default:
      return "NORMAL_UNSPECIFIED";
  }
}

/** `hangup_code` as the hosted service writes it. */
export function hangupCodeText(code: number): string {
  return `sip:${code}`;
}

/**
 * Of several devices' final answers to one ringing, the one the caller gets (RFC 3261 §16.7
 * in short): a global refusal (6xx) wins, then busy, then the first answer.
 */
export function bestFailure(codes: readonly number[]): number | undefined {
  return codes.find((c) => c >= 600) ?? codes.find((c) => c === 486) ?? codes[0];
}
