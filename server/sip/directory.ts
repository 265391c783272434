// Who a SIP request speaks for: the account whose realm is the request's domain, and the device
// of that account whose sip.username is the user. Read from the store each time, so it never lags.
import type { Store, StoredDoc } from "../store/index.js";

export interface SipAccount {
  id: string;
  realm: string;
  enabled: boolean;
}

export interface SipDevice {
  id: string;
  accountId: string;
  username: string;
  password: string;
  enabled: boolean;
  /** Seconds a registration lasts when the phone does not ask for a time. */
  registrationExpiration: number;
}

const DEFAULT_REGISTRATION_EXPIRATION_S = 300;

export class Directory {
  constructor(private readonly store: Store) {}

  /** The account whose realm is `domain`, compared case-insensitively as DNS names are. */
  async accountByRealm(domain: string): Promise<SipAccount | undefined> {
    const wanted = domain.toLowerCase();
    const accounts = await this.store.global("accounts");
    const doc = accounts.all().find((a) => typeof a.data.realm === "string" && a.data.realm.toLowerCase() === wanted);
    return doc && { id: doc.id, realm: String(doc.data.realm), enabled: doc.data.enabled !== false };
  }

  /** SIP usernames are unique per account regardless of case (the devices resource checks so). */
  async deviceByUsername(accountId: string, username: string): Promise<SipDevice | undefined> {
    const wanted = username.toLowerCase();
    const devices = await this.store.account(accountId, "devices");
    const doc = devices.all().find((d) => sipOf(d).username?.toLowerCase() === wanted);
    return doc && toDevice(accountId, doc);
  }

  async device(accountId: string, deviceId: string): Promise<SipDevice | undefined> {
    const doc = (await this.store.account(accountId, "devices")).get(deviceId);
    return doc && toDevice(accountId, doc);
  }
}

function sipOf(doc: StoredDoc): { username?: string; password?: string; registration_expiration?: number } {
  const sip = doc.data.sip;
  if (typeof sip !== "object" || sip === null) return {};
  const s = sip as Record<string, unknown>;
  return {
    username: typeof s.username === "string" ? s.username : undefined,
    password: typeof s.password === "string" ? s.password : undefined,
    registration_expiration: typeof s.registration_expiration === "number" ? s.registration_expiration : undefined,
  };
}

function toDevice(accountId: string, doc: StoredDoc): SipDevice | undefined {
  const sip = sipOf(doc);
  // A device without a username and password cannot register (sip.method "ip" phones, later).
  if (sip.username === undefined || sip.password === undefined) return undefined;
  return {
    id: doc.id,
    accountId,
    username: sip.username,
    password: sip.password,
    enabled: doc.data.enabled !== false,
    registrationExpiration: sip.registration_expiration ?? DEFAULT_REGISTRATION_EXPIRATION_S,
  };
}
