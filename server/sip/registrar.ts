// The location service: where each device is registered (its contacts), over which flow, until
// when. A binding ends by un-REGISTER, by expiring on the injected clock, or when its flow closes.
import { EventEmitter } from "node:events";
import type { TimeReader } from "../clock.js";

export interface Binding {
  readonly accountId: string;
  readonly deviceId: string;
  /** The address-of-record, `username@realm`. */
  readonly aor: string;
  /** The registered contact URI as text: the Request-URI of anything sent to this binding. */
  readonly contact: string;
  /** The contact's parameters other than expires (+sip.instance, reg-id ...), echoed in the 200. */
  readonly contactParams: Readonly<Record<string, string | null>>;
  /** Unix ms. */
  readonly expiresAt: number;
  /** The flow (WebSocket) the REGISTER came over; requests to the device go back over it. */
  readonly flowId: string;
  readonly callId: string;
  readonly cseq: number;
  /** Unix ms of the first REGISTER of this contact; kept across refreshes. */
  readonly registeredAt: number;
}

export type BindingInput = Omit<Binding, "registeredAt">;

/**
 * Contacts one device may have bound at once (Kamailio's `max_contacts`, which Kazoo leaves
 * unlimited): a phone, a softphone and a few reconnects, but not a flood a call would fork to.
 */
export const MAX_CONTACTS_PER_DEVICE = 10;

export type UnregisterReason = "unregistered" | "expired" | "flow_closed";

export interface RegisteredEvent {
  binding: Binding;
  /** True when the contact was already bound and this REGISTER extended it. */
  refreshed: boolean;
}

export interface UnregisteredEvent {
  binding: Binding;
  reason: UnregisterReason;
}

interface RegistrarEvents {
  registered: [RegisteredEvent];
  unregistered: [UnregisteredEvent];
}

export interface RegistrarOptions {
  clock: TimeReader;
  /** A listener that throws must not undo a registration already answered; it is reported here. */
  onListenerError?(err: unknown): void;
}

export class Registrar extends EventEmitter<RegistrarEvents> {
  readonly #clock: TimeReader;
  readonly #onListenerError: (err: unknown) => void;
  /** Keyed by `accountId/deviceId`, then by contact URI. */
  readonly #byDevice = new Map<string, Map<string, Binding>>();

  constructor(options: RegistrarOptions) {
    super();
    this.#clock = options.clock;
    this.#onListenerError = options.onListenerError ?? (() => undefined);
  }

  /** The live binding of this contact, if any. */
  lookup(accountId: string, deviceId: string, contact: string): Binding | undefined {
    const binding = this.#byDevice.get(key(accountId, deviceId))?.get(contact);
    return binding && binding.expiresAt > this.#clock.now() ? binding : undefined;
  }

  /** Adds a binding or refreshes the one for the same contact (new expiry, flow, CSeq). */
  bind(input: BindingInput): Binding {
    const deviceKey = key(input.accountId, input.deviceId);
    const previous = this.lookup(input.accountId, input.deviceId, input.contact);
    const lapsed = this.#byDevice.get(deviceKey)?.get(input.contact);
    // Expired but not yet swept: it ended before this REGISTER, and listeners hear so in order.
    if (lapsed && !previous) this.#remove(lapsed, "expired");
    let contacts = this.#byDevice.get(deviceKey);
    if (!contacts) {
      contacts = new Map();
      this.#byDevice.set(deviceKey, contacts);
    }
    const binding: Binding = { ...input, registeredAt: previous?.registeredAt ?? this.#clock.now() };
    contacts.set(input.contact, binding);
    this.#notify(() => this.emit("registered", { binding, refreshed: previous !== undefined }));
    return binding;
  }

  unbind(accountId: string, deviceId: string, contact: string): boolean {
    const binding = this.#byDevice.get(key(accountId, deviceId))?.get(contact);
    if (!binding) return false;
    this.#remove(binding, "unregistered");
    return true;
  }

  /** Removes every binding of a device (`Contact: *`); answers how many there were. */
  unbindDevice(accountId: string, deviceId: string): number {
    const contacts = [...(this.#byDevice.get(key(accountId, deviceId))?.values() ?? [])];
    for (const binding of contacts) this.#remove(binding, "unregistered");
    return contacts.length;
  }

  /** A flow closed: whatever was registered over it can no longer be reached. */
  dropFlow(flowId: string): void {
    for (const binding of this.#all()) if (binding.flowId === flowId) this.#remove(binding, "flow_closed");
  }

  /** Ends the bindings whose time is up on the clock. */
  sweep(): void {
    const now = this.#clock.now();
    for (const binding of this.#all()) if (binding.expiresAt <= now) this.#remove(binding, "expired");
  }

  /** The live bindings of a device. */
  bindings(accountId: string, deviceId: string): Binding[] {
    this.sweep();
    return [...(this.#byDevice.get(key(accountId, deviceId))?.values() ?? [])];
  }

  /** True when something is registered over the flow. */
  hasFlow(flowId: string): boolean {
    return this.#all().some((binding) => binding.flowId === flowId && binding.expiresAt > this.#clock.now());
  }

  /** Ids of the account's devices with at least one live binding, sorted. */
  registeredDevices(accountId: string): string[] {
    this.sweep();
    const ids = new Set<string>();
    for (const binding of this.#all()) if (binding.accountId === accountId) ids.add(binding.deviceId);
    return [...ids].sort();
  }

  get size(): number {
    let n = 0;
    for (const contacts of this.#byDevice.values()) n += contacts.size;
    return n;
  }

  #all(): Binding[] {
    return [...this.#byDevice.values()].flatMap((contacts) => [...contacts.values()]);
  }

  #remove(binding: Binding, reason: UnregisterReason): void {
    const deviceKey = key(binding.accountId, binding.deviceId);
    const contacts = this.#byDevice.get(deviceKey);
    if (contacts?.get(binding.contact) !== binding) return;
    contacts.delete(binding.contact);
    if (contacts.size === 0) this.#byDevice.delete(deviceKey);
    this.#notify(() => this.emit("unregistered", { binding, reason }));
  }

  #notify(emit: () => void): void {
    try {
      emit();
    } catch (err) {
      this.#onListenerError(err);
    }
  }
}

function key(accountId: string, deviceId: string): string {
  return `${accountId}/${deviceId}`;
}
