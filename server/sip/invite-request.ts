// An INVITE this server sends, and the two requests of its own transaction: the ACK of a non-2xx
// final response (RFC 3261 §17.1.1.3) and the CANCEL (§9.1); both copy the INVITE's Via and CSeq.
import { buildRequest, type SipResponse } from "./message.js";

export interface OutgoingInvite {
  uri: string;
  /** The whole top Via, branch included. */
  via: string;
  from: string;
  to: string;
  callId: string;
  cseq: number;
}

/** The INVITE itself; `headers` follow the ones every request of its transaction carries. */
export function inviteText(invite: OutgoingInvite, headers: [string, string][], body: string): string {
  return transactionRequest(invite, "INVITE", invite.to, headers, body);
}

/** The ACK of a 3xx-6xx: hop by hop, in the INVITE's transaction, To as the response has it. */
export function ackForFailure(invite: OutgoingInvite, response: SipResponse): string {
  return transactionRequest(invite, "ACK", response.message.getHeader("to") ?? invite.to, []);
}

/** The CANCEL of a pending INVITE; a Reason (RFC 3326) says why, e.g. answered elsewhere. */
export function cancelFor(invite: OutgoingInvite, reason?: string): string {
  return transactionRequest(invite, "CANCEL", invite.to, reason === undefined ? [] : [["Reason", reason]]);
}

function transactionRequest(invite: OutgoingInvite, method: string, to: string, headers: [string, string][], body?: string): string {
  return buildRequest({
    method,
    uri: invite.uri,
    headers: [
      ["Via", invite.via],
      ["Max-Forwards", "70"],
      ["From", invite.from],
      ["To", to],
      ["Call-ID", invite.callId],
      ["CSeq", `${invite.cseq} ${method}`],
      ...headers,
    ],
    body,
  });
}
