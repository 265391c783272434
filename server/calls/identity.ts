// Who a call leg presents itself as: the caller id of a calling device (its own, its owner's, else
// the SIP From), the callee id of a rung device or user, and the presence id channel lists show.
import type { StoredDoc } from "../store/index.js";
import type { CallParty } from "../sip/call-signalling.js";
import type { ChannelParty } from "./channel.js";

function objectAt(value: unknown, key: string): Record<string, unknown> | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const inner = (value as Record<string, unknown>)[key];
  return typeof inner === "object" && inner !== null && !Array.isArray(inner) ? (inner as Record<string, unknown>) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value : undefined;
}

/** `caller_id.internal` of a device or user: calls between devices are internal calls. */
function internalCallerId(doc: StoredDoc | undefined): Partial<ChannelParty> {
  const internal = objectAt(objectAt(doc?.data, "caller_id"), "internal");
  return { name: text(internal?.name), number: text(internal?.number) };
}

export function sipUsernameOf(device: StoredDoc): string {
  return text(objectAt(device.data, "sip")?.username) ?? device.id;
}

/** The caller id of a call from `device`: the device's, else its owner's, else the SIP From. */
export function callerIdOf(device: StoredDoc | undefined, owner: StoredDoc | undefined, from: CallParty): ChannelParty {
  const own = internalCallerId(device);
  const owners = internalCallerId(owner);
  return {
    name: own.name ?? owners.name ?? text(from.display) ?? from.user,
    number: own.number ?? owners.number ?? from.user,
  };
}

/** How a user is shown to a caller: the user's internal caller id, else name and extension. */
export function userParty(user: StoredDoc): ChannelParty {
  const id = internalCallerId(user);
  const fullName = [text(user.data.first_name), text(user.data.last_name)].filter((p) => p !== undefined).join(" ");
  return {
    name: id.name ?? (fullName || (text(user.data.username) ?? user.id)),
    number: id.number ?? text(user.data.presence_id) ?? text(user.data.username) ?? "",
  };
}

/** How a rung device is shown: its owner as a user, else the device's own caller id or name. */
export function deviceParty(device: StoredDoc, owner: StoredDoc | undefined): ChannelParty {
  if (owner) return userParty(owner);
  const id = internalCallerId(device);
  return { name: id.name ?? text(device.data.name) ?? sipUsernameOf(device), number: id.number ?? sipUsernameOf(device) };
}

/** `<owner's presence id or the device's username>@realm`, as the hosted service's channel rows. */
export function presenceIdOf(device: StoredDoc, owner: StoredDoc | undefined, realm: string): string {
  return `${text(owner?.data.presence_id) ?? sipUsernameOf(device)}@${realm}`;
}

export function ownerIdOf(device: StoredDoc | undefined): string | undefined {
  return text(device?.data.owner_id);
}
