// The devices a call to a device or to a user rings: the device with its owner, or every enabled
// device the user owns (their registrations are checked when they are rung).
import type { Store, StoredDoc } from "../store/index.js";
import type { DialTarget } from "./dial.js";
import { ownerIdOf } from "./identity.js";

export interface DeviceTargets {
  device: StoredDoc;
  owner?: StoredDoc;
  targets: DialTarget[];
}

export interface UserTargets {
  user: StoredDoc;
  targets: DialTarget[];
}

/** Undefined when the account has no such device. */
export async function deviceTargets(store: Store, accountId: string, deviceId: string): Promise<DeviceTargets | undefined> {
  const device = (await store.account(accountId, "devices")).get(deviceId);
  if (!device) return undefined;
  const ownerId = ownerIdOf(device);
  const owner = ownerId === undefined ? undefined : (await store.account(accountId, "users")).get(ownerId);
  return { device, owner, targets: device.data.enabled === false ? [] : [{ device, owner }] };
}

/** Undefined when the account has no such user. */
export async function userTargets(store: Store, accountId: string, userId: string): Promise<UserTargets | undefined> {
  const user = (await store.account(accountId, "users")).get(userId);
  if (!user) return undefined;
  const devices = (await store.account(accountId, "devices")).all();
  const owned = devices.filter((d) => d.data.owner_id === user.id && d.data.enabled !== false);
  return { user, targets: owned.map((device) => ({ device, owner: user })) };
}
