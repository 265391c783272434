// The console's calls against the server's truth. After a reconnect (a server restart, a dropped
// socket) the phone's sip.js sessions may stand for calls the server no longer has: nothing tells
// the phone (the BYE was never sent, or went down with the socket), so each call is checked
// against the user's live channels once the phone is registered again, and those gone are ended.
// And a call that changes hands on the server (a completed attended transfer) is told by a
// `call.CALL_UPDATE` event: the dialog's From cannot change, so the card follows the event.
import type { PlatformEvent } from "../api/events.js";
import type { PlatformApi } from "../api/platform.js";
import type { CallView } from "./phone.js";

/** Of `calls`, the ones whose leg (the SIP Call-ID) the server does not have any more. */
export async function callsGoneFromServer(api: PlatformApi, ownerId: string, calls: readonly CallView[]): Promise<CallView[]> {
  if (calls.length === 0) return [];
  const live = new Set(await api.liveCallIds(ownerId));
  return calls.filter((call) => !live.has(call.callId));
}

export interface RemotePartyUpdate {
  id: string;
  remoteName: string;
  remoteUser: string;
}

/**
 * The new far party of one of `calls`, from a CALL_UPDATE of its leg. The server's leg that rang
 * this phone is outbound (its caller is the far party); the leg this phone dialled is inbound
 * (its callee is).
 */
export function remotePartyUpdate(event: PlatformEvent, calls: readonly CallView[]): RemotePartyUpdate | null {
  if (event.name !== "CALL_UPDATE") return null;
  const data = event.data;
  const call = calls.find((c) => c.callId === data.call_id);
  if (call === undefined) return null;
  const side = data.call_direction === "outbound" ? "caller" : "callee";
  const name = data[`${side}_id_name`];
  const number = data[`${side}_id_number`];
  if (typeof number !== "string" || number === "") return null;
  const remoteName = typeof name === "string" && name !== "" ? name : number;
  if (remoteName === call.remoteName && number === call.remoteUser) return null;
  return { id: call.id, remoteName, remoteUser: number };
}
