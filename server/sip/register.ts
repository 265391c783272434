// The REGISTER method (RFC 3261 §10.3): finds the account by realm and the device by SIP username,
// authenticates by digest, works out each contact's expiry, and binds or unbinds it.
import type { Clock } from "../clock.js";
import type { NonceBook } from "./digest.js";
import { authenticateDevice, isReply } from "./digest-auth.js";
import type { Directory, SipAccount, SipDevice } from "./directory.js";
import type { RequestHandler, SipReply } from "./dispatcher.js";
import { contactsOf, formatParams, type SipRequest } from "./message.js";
import { MAX_CONTACTS_PER_DEVICE, type Binding, type BindingInput, type Registrar } from "./registrar.js";

/** Below this (and above 0) a REGISTER gets 423 Interval Too Brief. */
const MIN_EXPIRES_S = 60;
/** Longer requests are granted this. */
const MAX_EXPIRES_S = 3600;

export interface RegisterDeps {
  directory: Directory;
  registrar: Registrar;
  nonces: NonceBook;
  clock: Clock;
}

export function registerHandler(deps: RegisterDeps): RequestHandler {
  return async (request, flow) => {
    const auth = await authenticate(request, deps);
    if ("status" in auth) return auth;
    const { account, device } = auth;
    const changes = plan(request, device, deps);
    if (changes !== "all" && !Array.isArray(changes)) return changes;
    // The lookups above awaited: the socket may have closed meanwhile, and a binding to a closed
    // flow would point at nothing until it expired.
    if (!flow.isOpen()) return null;
    const aor = `${device.username}@${account.realm}`;
    if (changes === "all") {
      deps.registrar.unbindDevice(account.id, device.id);
    } else {
      for (const change of changes) {
        if (change.expiresS === 0) {
          deps.registrar.unbind(account.id, device.id, change.contact);
          continue;
        }
        const binding: BindingInput = {
          accountId: account.id,
          deviceId: device.id,
          aor,
          contact: change.contact,
          contactParams: change.params,
          expiresAt: deps.clock.now() + change.expiresS * 1000,
          flowId: flow.id,
          callId: request.message.callId,
          cseq: request.message.cseq,
        };
        deps.registrar.bind(binding);
      }
    }
    return { status: 200, headers: bindingHeaders(deps.registrar.bindings(account.id, device.id), deps.clock.now()) };
  };
}

type Authenticated = { account: SipAccount; device: SipDevice };

async function authenticate(request: SipRequest, deps: RegisterDeps): Promise<Authenticated | SipReply> {
  const to = request.message.to.uri;
  // Phones set up with the server's address instead of the realm still name it in To.
  const account = (await deps.directory.accountByRealm(request.uri.host)) ?? (await deps.directory.accountByRealm(to.host));
  // §10.3 steps 1 and 5: a domain this registrar does not serve, or an AOR outside it.
  if (!account || to.host.toLowerCase() !== account.realm.toLowerCase()) return { status: 404 };
  const device = await authenticateDevice(request, account, "registrar", deps);
  if (isReply(device)) return device;
  // §10.3 step 6: the authenticated device may change only its own bindings.
  if ((to.user ?? "").toLowerCase() !== device.username.toLowerCase()) return { status: 403 };
  return { account, device };
}

interface Change {
  contact: string;
  params: Record<string, string | null>;
  /** Granted seconds; 0 removes the binding. */
  expiresS: number;
}

/** What the REGISTER asks, checked whole before anything changes: `"all"` for `Contact: *`. */
function plan(request: SipRequest, device: SipDevice, deps: RegisterDeps): Change[] | "all" | SipReply {
  const header = request.message.getHeader("expires");
  const headerExpires = header === undefined ? undefined : seconds(header);
  const contacts = contactsOf(request);
  const outOfOrder = (existing: Binding | undefined): boolean =>
    existing !== undefined && existing.callId === request.message.callId && existing.cseq >= request.message.cseq;
  // §10.3 step 7: a REGISTER older than the one that made a binding must not undo it.
  const stale: SipReply = { status: 500, reason: "Out Of Order" };

  if (request.contactStar) {
    if (headerExpires !== 0 || contacts.length > 0) return { status: 400, reason: "Contact * needs Expires 0 and no other contact" };
    const bindings = deps.registrar.bindings(device.accountId, device.id);
    return bindings.some(outOfOrder) ? stale : "all";
  }

  const changes: Change[] = [];
  for (const nameAddr of contacts) {
    const param = nameAddr.getParam("expires");
    const requested = param === undefined || param === null ? headerExpires : seconds(param);
    let expiresS: number;
    if (requested === undefined) {
      // Not asked by the phone: the device's setting, kept within what this registrar grants.
      expiresS = Math.min(Math.max(device.registrationExpiration, MIN_EXPIRES_S), MAX_EXPIRES_S);
    } else if (requested === 0) {
      expiresS = 0;
    } else if (requested < MIN_EXPIRES_S) {
      return { status: 423, headers: [["Min-Expires", String(MIN_EXPIRES_S)]] };
    } else {
      expiresS = Math.min(requested, MAX_EXPIRES_S);
    }
    const contact = nameAddr.uri.toString();
    if (outOfOrder(deps.registrar.lookup(device.accountId, device.id, contact))) return stale;
    const params: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(nameAddr.parameters)) if (k.toLowerCase() !== "expires") params[k] = v;
    changes.push({ contact, params, expiresS });
  }
  const bound = new Set(deps.registrar.bindings(device.accountId, device.id).map((b) => b.contact));
  for (const change of changes) {
    if (change.expiresS === 0) bound.delete(change.contact);
    else bound.add(change.contact);
  }
  // Refreshes and removals always pass; a new contact past the cap is refused whole, and the
  // bindings already there stay (as Kamailio does). 403, not Kamailio's 503: trying again, here
  // or at another server, cannot help until one of the device's other contacts goes.
  if (bound.size > MAX_CONTACTS_PER_DEVICE) {
    return { status: 403, reason: "Too Many Registered Contacts", headers: [["Warning", `399 switchboard "at most ${MAX_CONTACTS_PER_DEVICE} contacts per device"`]] };
  }
  return changes;
}

/** RFC 3261 §20.19: a malformed expiry counts as 3600 seconds (then capped like any other). */
function seconds(text: string): number {
  const trimmed = text.trim();
  return /^\d+$/.test(trimmed) ? Number(trimmed) : MALFORMED_EXPIRES_S;
}

const MALFORMED_EXPIRES_S = 3600;

/** §10.3 step 8: the 200 lists every current binding of the AOR with its remaining seconds. */
function bindingHeaders(bindings: Binding[], now: number): [string, string][] {
  return bindings.map((b) => ["Contact", `<${b.contact}>${formatParams(b.contactParams)};expires=${Math.max(0, Math.ceil((b.expiresAt - now) / 1000))}`]);
}
