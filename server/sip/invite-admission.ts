// Whether an INVITE that opens a dialog may become a call: well formed enough for a dialog, from a
// device of the account (digest as a proxy, 407), with an SDP offer and no extension we lack.
import { authenticateDevice, isReply, type DigestAuthDeps } from "./digest-auth.js";
import type { SipAccount, SipDevice } from "./directory.js";
import type { SipReply } from "./dispatcher.js";
import { contactUri, mediaType, sdpBody, type SipRequest } from "./message.js";
import { sessionTimerRefusal } from "./session-timer.js";

export interface AdmittedInvite {
  account: SipAccount;
  device: SipDevice;
  /** The far end's Contact: the target of requests inside the dialog. */
  remoteTarget: string;
  offer: string;
}

/** The checks in the order of RFC 3261 §8.2: headers a dialog needs, then authentication, then content. */
export async function admitInvite(request: SipRequest, deps: DigestAuthDeps): Promise<AdmittedInvite | SipReply> {
  const message = request.message;
  // §12.1.1: the From tag is half of the dialog's id; §8.1.1.8: the Contact is where it goes.
  if (!message.fromTag) return { status: 400, reason: "Missing From tag" };
  const remoteTarget = contactUri(message);
  if (remoteTarget === undefined) return { status: 400, reason: "Missing Contact" };

  // The caller's domain names the account; failing that, the domain it dialled.
  const account = (await deps.directory.accountByRealm(message.from.uri.host)) ?? (await deps.directory.accountByRealm(request.uri.host));
  if (!account) return { status: 404 };
  const device = await authenticateDevice(request, account, "proxy", deps);
  if (isReply(device)) return device;

  // §8.2.2.3: of the SIP extensions a caller could require, this server supports session timers.
  const required = message
    .getHeaders("require")
    .flatMap((h) => h.split(","))
    .map((t) => t.trim())
    .filter((t) => t !== "" && t.toLowerCase() !== "timer");
  if (required.length > 0) return { status: 420, headers: [["Unsupported", required.join(", ")]] };
  const tooSmall = sessionTimerRefusal(request);
  if (tooSmall) return tooSmall;
  if (!request.uri.user) return { status: 404, reason: "Nothing Dialled" };

  const offer = sdpBody(message);
  if (offer === null) {
    // §8.2.3: a body of a type we do not read. No body at all means an offerless INVITE, which
    // would want our offer in the 200 and the answer in the ACK; the contract hands the engine
    // an offer to answer, so it is refused 488 like an offer it cannot accept.
    if (message.body.trim() !== "" && mediaType(message) !== "application/sdp") return { status: 415, headers: [["Accept", "application/sdp"]] };
    return { status: 488 };
  }
  return { account, device, remoteTarget, offer };
}
