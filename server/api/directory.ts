// /v2/accounts/{account_id}/directory (local addition): every user of the account with their live
// presence, composed from the user documents (do not disturb), the registrar (a device
// registered), the live channels (ringing, on a call) and the queue engine (Ready, Away with its
// reason, wrap-up). A change of a user's presence is published as `directory.user.<user_id>`, so
// a console follows its colleagues without polling.
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { isRecipientUser } from "../callq-host/store-binding.js";
import { CallqError } from "../callq/engine.js";
import type { BusEvent } from "../events/bus.js";
import { registerEndpoint } from "../http/endpoint.js";
import { isObject } from "../http/request.js";
import type { Data } from "../http/resource.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

/** What a colleague sees, first match wins in this order (a call outranks any queue state). */
export const PRESENCES = ["on_call", "ringing", "offline", "do_not_disturb", "ready", "away", "wrapup", "available"] as const;
export type Presence = (typeof PRESENCES)[number];

export const DIRECTORY_EVENT = "presence";

export interface DirectoryEntry {
  id: string;
  name: string;
  first_name?: string;
  last_name?: string;
  username?: string;
  /** The numbers of the callflows that ring this user (the user module). */
  extensions: string[];
  presence: Presence;
  registered: boolean;
  do_not_disturb: boolean;
  /** Set for a queue recipient who is logged in. */
  availability_state?: string;
  away_reason?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

function displayName(user: StoredDoc): string {
  const full = [text(user.data.first_name), text(user.data.last_name)].filter((p) => p !== undefined).join(" ");
  return full !== "" ? full : (text(user.data.username) ?? user.id);
}

export function doNotDisturbOn(data: Data): boolean {
  return isObject(data.do_not_disturb) && data.do_not_disturb.enabled === true;
}

/** What one account's presence is composed from, read once for a batch of users. */
interface Snapshot {
  devicesOf: Map<string, string[]>;
  registered: Set<string>;
  extensionsOf: Map<string, string[]>;
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

async function snapshot(deps: ApiDeps, accountId: string): Promise<Snapshot> {
  const devicesOf = new Map<string, string[]>();
  for (const device of (await deps.collection(accountId, "devices")).all()) {
    const owner = device.data.owner_id;
    if (typeof owner === "string" && device.data.enabled !== false) push(devicesOf, owner, device.id);
  }
  const extensionsOf = new Map<string, string[]>();
  for (const callflow of (await deps.collection(accountId, "callflows")).all()) {
    const flow = callflow.data.flow;
    if (!isObject(flow) || flow.module !== "user" || !isObject(flow.data) || typeof flow.data.id !== "string") continue;
    const numbers = Array.isArray(callflow.data.numbers) ? callflow.data.numbers : [];
    for (const n of numbers) if (typeof n === "string") push(extensionsOf, flow.data.id, n);
  }
  return { devicesOf, registered: new Set(deps.sip?.registeredDevices(accountId) ?? []), extensionsOf };
}

async function queueState(deps: ApiDeps, accountId: string, user: StoredDoc): Promise<{ state: string; awayReason?: string } | undefined> {
  if (!deps.callq || !isRecipientUser(user)) return undefined;
  try {
    const status = await deps.callq.recipientStatus(accountId, user.id);
    if (status.availability_state === "Not-Logged-In") return undefined;
    return { state: status.availability_state, awayReason: status.away_reason };
  } catch (err) {
    // The engine may not know a user the store just enabled: no queue state yet.
    if (err instanceof CallqError) return undefined;
    throw err;
  }
}

function callPresence(deps: ApiDeps, accountId: string, userId: string): Presence | undefined {
  const legs = (deps.calls?.channels.ofUser(accountId, userId) ?? []).filter((c) => c.state !== "hungup");
  // A leg the user's phone placed counts as a call from its first ring; one sent to it, once answered.
  if (legs.some((c) => c.answered || c.direction === "inbound")) return "on_call";
  return legs.length > 0 ? "ringing" : undefined;
}

async function entryOf(deps: ApiDeps, accountId: string, user: StoredDoc, snap: Snapshot): Promise<DirectoryEntry> {
  const registered = (snap.devicesOf.get(user.id) ?? []).some((id) => snap.registered.has(id));
  const dnd = doNotDisturbOn(user.data);
  const queue = await queueState(deps, accountId, user);
  const presence: Presence =
    callPresence(deps, accountId, user.id) ??
    (queue?.state === "On-A-Call" ? "on_call" : queue?.state === "Call-Offer" ? "ringing" : undefined) ??
    (!registered ? "offline" : dnd ? "do_not_disturb" : queue?.state === "Ready" ? "ready" : queue?.state === "Away" ? "away" : queue?.state === "Wrapup-Time" ? "wrapup" : "available");
  const entry: DirectoryEntry = {
    id: user.id,
    name: displayName(user),
    extensions: snap.extensionsOf.get(user.id) ?? [],
    presence,
    registered,
    do_not_disturb: dnd,
  };
  const first = text(user.data.first_name);
  const last = text(user.data.last_name);
  const username = text(user.data.username);
  if (first !== undefined) entry.first_name = first;
  if (last !== undefined) entry.last_name = last;
  if (username !== undefined) entry.username = username;
  if (queue) entry.availability_state = queue.state;
  if (queue?.awayReason !== undefined) entry.away_reason = queue.awayReason;
  return entry;
}

function sortKey(user: StoredDoc): string {
  return `${String(user.data.last_name ?? "")}\u0000${String(user.data.first_name ?? "")}\u0000${user.id}`.toLowerCase();
}

/** Every enabled user of the account, by last then first name. */
export async function directoryOf(deps: ApiDeps, accountId: string): Promise<DirectoryEntry[]> {
  const users = (await deps.collection(accountId, "users")).all().filter((u) => u.data.enabled !== false);
  users.sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  const snap = await snapshot(deps, accountId);
  return Promise.all(users.map((u) => entryOf(deps, accountId, u, snap)));
}

/** Which users an event may have changed the presence of; "all" when it could be anyone's. */
async function touchedBy(deps: ApiDeps, event: BusEvent): Promise<Set<string> | "all"> {
  const [family, kind, id] = event.routing_key.split(".");
  const owner = event.data.owner_id;
  if (family === "call") return new Set(typeof owner === "string" ? [owner] : []);
  if (family === "callq" && kind === "recipient" && id !== undefined) return new Set([id]);
  if (family === "notification" && (kind === "register" || kind === "deregister") && id !== undefined) {
    const deviceOwner = (await deps.collection(event.account_id, "devices")).get(id)?.data.owner_id;
    return new Set(typeof deviceOwner === "string" ? [deviceOwner] : []);
  }
  if (family === "object" && id === "user" && typeof event.data.id === "string") return new Set([event.data.id]);
  // A device changing hands or a callflow's numbers can change several entries at once.
  if (family === "object" && (id === "device" || id === "callflow")) return "all";
  return new Set();
}

/**
 * Follows the bus: after the events of one turn, each touched user's entry is composed again and
 * published when it differs from the last one published. Returns the function that stops.
 */
function followPresence(deps: ApiDeps, logger: FastifyBaseLogger): () => void {
  const events = deps.events;
  if (!events) return () => undefined;
  const bus = events.bus;
  const published = new Map<string, Map<string, string>>();
  const pending = new Map<string, Set<string> | "all">();
  let scheduled = false;

  const flush = async (): Promise<void> => {
    scheduled = false;
    const batch = [...pending];
    pending.clear();
    for (const [accountId, touched] of batch) {
      const users = await deps.collection(accountId, "users");
      const docs = touched === "all" ? users.all() : [...touched].map((id) => users.get(id)).filter((u): u is StoredDoc => u !== undefined);
      const snap = await snapshot(deps, accountId);
      let last = published.get(accountId);
      if (!last) published.set(accountId, (last = new Map()));
      for (const user of docs) {
        const entry = await entryOf(deps, accountId, user, snap);
        const shown = JSON.stringify(entry);
        if (last.get(user.id) === shown) continue;
        last.set(user.id, shown);
        bus.publish({ account_id: accountId, routing_key: `directory.user.${user.id}`, name: DIRECTORY_EVENT, data: { account_id: accountId, ...entry } });
      }
    }
  };

  const note = (accountId: string, touched: Set<string> | "all"): void => {
    const before = pending.get(accountId);
    if (touched === "all" || before === "all") pending.set(accountId, "all");
    else pending.set(accountId, new Set([...(before ?? []), ...touched]));
    if (scheduled) return;
    scheduled = true;
    // A turn later: the state the event announces is in place, and the bus is not re-entered.
    setImmediate(() => void flush().catch((err: unknown) => logger.warn({ err }, "directory: publishing presence failed")));
  };

  return bus.subscribe((event) => {
    if (event.routing_key.startsWith("directory.")) return;
    void touchedBy(deps, event)
      .then((touched) => {
        if (touched === "all" || touched.size > 0) note(event.account_id, touched);
      })
      .catch((err: unknown) => logger.warn({ err }, "directory: following an event failed"));
  });
}

export function registerDirectory(app: FastifyInstance, deps: ApiDeps): void {
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/directory",
    access: "account",
    tag: "directory",
    verbs: {
      GET: {
        summary: "Local addition: every user of the account with their live presence (directory.user.<user_id> events follow changes)",
        handler: async (ctx) => ({ data: await directoryOf(deps, ctx.params.account_id ?? "") }),
      },
    },
  });
  const stop = followPresence(deps, app.log);
  app.addHook("onClose", async () => stop());
}
