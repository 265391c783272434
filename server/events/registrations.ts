// Device registrations on the bus: a new binding publishes `notification.register.<device_id>`,
// a binding that ends (un-REGISTER, expiry, socket closed) `notification.deregister.<device_id>`,
// which the notifications webhooks (register, deregister) and the websocket pick up.
import type { Registrar, Binding } from "../sip/registrar.js";
import type { EventBus } from "./bus.js";

function payload(type: "register" | "deregister", b: Binding, expiresAtS: number): Record<string, unknown> {
  const [username, realm] = b.aor.split("@");
  return {
    type,
    account_id: b.accountId,
    device_id: b.deviceId,
    username,
    realm,
    contact: b.contact,
    expires: expiresAtS,
  };
}

export function publishRegistrations(registrar: Registrar, bus: EventBus, nowS: () => number): () => void {
  const onRegistered = ({ binding, refreshed }: { binding: Binding; refreshed: boolean }): void => {
    // A refresh is not news: watchers care when a phone comes and goes.
    if (refreshed) return;
    bus.publish({
      account_id: binding.accountId,
      routing_key: `notification.register.${binding.deviceId}`,
      name: "register",
      data: payload("register", binding, Math.max(0, Math.round(binding.expiresAt / 1000 - nowS()))),
    });
  };
  const onUnregistered = ({ binding, reason }: { binding: Binding; reason: string }): void => {
    bus.publish({
      account_id: binding.accountId,
      routing_key: `notification.deregister.${binding.deviceId}`,
      name: "deregister",
      data: { ...payload("deregister", binding, 0), reason },
    });
  };
  registrar.on("registered", onRegistered);
  registrar.on("unregistered", onUnregistered);
  return () => {
    registrar.off("registered", onRegistered);
    registrar.off("unregistered", onUnregistered);
  };
}
