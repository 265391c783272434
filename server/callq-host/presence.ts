// Feeds the queue engine whether each recipient has a queue device registered: a user whose last
// such device unregisters starts the engine's grace timer, one registering again ends it. At
// start, every recipient restored logged in is checked once, so an agent whose phone does not
// come back after a restart stops receiving offers after the grace period.
import type { Binding, Registrar } from "../sip/registrar.js";
import type { Store, StoredDoc } from "../store/index.js";
import type { CallqEngine, CallqLogger } from "../callq/index.js";

export interface PresenceDeps {
  registrar: Registrar;
  store: Store;
  engine: CallqEngine;
  logger: CallqLogger;
}

/** A device a queue may ring (queued-call.ts queueTargets): enabled, not excluded from queues. */
function ringsForQueues(device: StoredDoc): boolean {
  return device.data.enabled !== false && device.data.exclude_from_queues !== true;
}

function ownerOf(device: StoredDoc | undefined): string | undefined {
  const owner = device?.data.owner_id;
  return typeof owner === "string" && owner !== "" ? owner : undefined;
}

/** Whether any of the user's queue devices has a live binding. */
async function hasQueueDevice(deps: PresenceDeps, accountId: string, userId: string): Promise<boolean> {
  const registered = new Set(deps.registrar.registeredDevices(accountId));
  const devices = (await deps.store.account(accountId, "devices")).all();
  return devices.some((d) => ownerOf(d) === userId && ringsForQueues(d) && registered.has(d.id));
}

/** Starts following the registrar; the returned function stops. */
export async function followDevicePresence(deps: PresenceDeps): Promise<() => void> {
  const update = (binding: Binding): void => {
    void (async () => {
      const device = (await deps.store.account(binding.accountId, "devices")).get(binding.deviceId);
      const owner = ownerOf(device);
      if (owner === undefined) return;
      await deps.engine.devicePresence(binding.accountId, owner, await hasQueueDevice(deps, binding.accountId, owner));
    })().catch((err: unknown) => deps.logger.warn({ err, device_id: binding.deviceId }, "callq: following a device's registration failed"));
  };
  const onRegistered = ({ binding, refreshed }: { binding: Binding; refreshed: boolean }): void => {
    if (!refreshed) update(binding);
  };
  const onUnregistered = ({ binding }: { binding: Binding }): void => update(binding);
  deps.registrar.on("registered", onRegistered);
  deps.registrar.on("unregistered", onUnregistered);
  const accounts = await deps.store.global("accounts");
  for (const account of accounts.all()) {
    for (const userId of await deps.engine.loggedInRecipients(account.id)) {
      if (!(await hasQueueDevice(deps, account.id, userId))) await deps.engine.devicePresence(account.id, userId, false);
    }
  }
  return () => {
    deps.registrar.off("registered", onRegistered);
    deps.registrar.off("unregistered", onUnregistered);
  };
}
