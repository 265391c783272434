// Session timers (RFC 4028) as the answering side: a caller that asks for them (Session-Expires,
// Supported: timer; JsSIP does by default) gets them in the 2xx, and its refreshes, by UPDATE
// (JsSIP's default) or re-INVITE, are answered 2xx with the interval again. The refresher is
// always the far end here: a request that wants this server to refresh (refresher=uas) is
// answered without Session-Expires, which RFC 4028 §9 allows and which turns the timer off, so
// no call ever depends on a refresh this server would have to send.
//
// This server does not end a call whose refreshes stop: the media and the BYE already tell it
// when a phone is gone.
import type { SipReply } from "./dispatcher.js";
import type { SipRequest } from "./message.js";

/** The smallest interval taken (RFC 4028's recommended Min-SE, and JsSIP's default interval). */
export const MIN_SESSION_EXPIRES_S = 90;

type Header = [string, string];

function tokens(request: SipRequest, name: string): string[] {
  return request.message
    .getHeaders(name)
    .flatMap((h) => h.split(","))
    .map((t) => t.trim().toLowerCase())
    .filter((t) => t !== "");
}

/** The Session-Expires the request asks for: seconds and refresher, or undefined when none (or unreadable). */
function asked(request: SipRequest): { seconds: number; refresher?: string } | undefined {
  const value = request.message.getHeader("session-expires");
  if (value === undefined) return undefined;
  const [delta, ...params] = value.split(";").map((p) => p.trim());
  if (delta === undefined || !/^\d{1,10}$/.test(delta)) return undefined;
  const refresher = params
    .map((p) => p.split("="))
    .find(([k]) => k?.trim().toLowerCase() === "refresher")?.[1]
    ?.trim()
    .toLowerCase();
  return { seconds: Number(delta), ...(refresher === undefined ? {} : { refresher }) };
}

/** A refusal for an interval under Min-SE (422 with Min-SE, §8.1), else undefined. */
export function sessionTimerRefusal(request: SipRequest): SipReply | undefined {
  const wanted = asked(request);
  if (wanted === undefined || wanted.seconds >= MIN_SESSION_EXPIRES_S) return undefined;
  return { status: 422, reason: "Session Interval Too Small", headers: [["Min-SE", String(MIN_SESSION_EXPIRES_S)]] };
}

/** The headers of a 2xx to an INVITE or UPDATE that asked for a session timer (none when it did not). */
export function sessionTimerHeaders(request: SipRequest): Header[] {
  const wanted = asked(request);
  const supported = tokens(request, "supported").includes("timer");
  if (wanted === undefined || !supported || wanted.refresher === "uas") return [];
  return [
    ["Session-Expires", `${Math.max(wanted.seconds, MIN_SESSION_EXPIRES_S)};refresher=uac`],
    ["Require", "timer"],
  ];
}
