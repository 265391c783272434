// /v2/accounts/{account_id}/caller_history/{number} (local addition): what a console shows beside
// a call that rings (the screen pop): who the number is (a texting contact's name, a user's), the
// calls it was in (caller or callee, both directions) newest first and paged, one row per
// interaction with its agents, queue, disposition and note and the recordings to play, and the
// texts exchanged with it, and the CRM link (the `queue_id` query's queue's template, else the
// account's) with the number in it.
//
// Who may ask: an admin and a supervisor (call_monitor) any number; any other user only a number
// one of their live legs (ringing or answered) is with. Another number is 403: an agent may not
// browse who called the account.
//
// Fast at scale: CDRs are filed by an equality index under the tail of each of their numbers, so
// a lookup walks that number's legs, newest first, and stops at the page's end; the exact match
// (E.164 in the account's country) is applied to each leg walked.
import type { FastifyInstance } from "fastify";
import { cdrSortKey, CDRS_COLLECTION, RECORDINGS_COLLECTION } from "../calls/index.js";
import type { Channel } from "../calls/channel.js";
import { registerEndpoint, type AuthContext, type Ctx } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { equalityIndexOn } from "../http/filters.js";
import { PageBuilder, pagePlan } from "../http/paging.js";
import { accountCountry, toE164 } from "../phone-numbers.js";
import type { Collection, EqualityIndexSpec, StoredDoc } from "../store/index.js";
import { CONTACTS_COLLECTION } from "../texting/contacts.js";
import { MESSAGES_COLLECTION } from "../texting/service.js";
import { hasCallMonitor } from "./callq-queues.js";
import type { ApiDeps } from "./deps.js";
import { crmLinkFor } from "./crm-link.js";
import type { CountryCode } from "libphonenumber-js";

/** Digits kept from the end of a number for the index: what its national and E.164 forms share. */
const TAIL_DIGITS = 7;
/** The CDR index of numbers; `pvt_`, so no list filter can name it. */
export const NUMBER_TAIL_FIELD = "pvt_number_tail";
const DEFAULT_CALLS_PAGE = 20;
const MAX_CALLS_PAGE = 100;
const TEXTS_SHOWN = 20;

/** A number as the path may give it: digits, with a leading + for E.164. */
const NUMBER_PATTERN = /^\+?\d{2,20}$/;

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The key a number is filed under: its last digits. E.164 and national forms of one number end
 * with the same national number, whatever the account's country, so the index needs no country;
 * numbers sharing a tail are told apart by the exact match on each leg walked.
 */
export function numberTail(number: string): string | undefined {
  const digits = number.replace(/\D/g, "");
  return digits === "" ? undefined : `t:${digits.slice(-TAIL_DIGITS)}`;
}

export const cdrNumberIndex: EqualityIndexSpec = {
  field: NUMBER_TAIL_FIELD,
  keys: (doc) =>
    [doc.data.caller_id_number, doc.data.callee_id_number].flatMap((n) => {
      const tail = typeof n === "string" ? numberTail(n) : undefined;
      return tail === undefined ? [] : [tail];
    }),
};

/** Normalised numbers remembered: a parse costs about a tenth of a millisecond, and a page walks the same few numbers many times. */
const NORMALISED_KEPT = 10_000;
const normalisedCache = new Map<string, string>();

/** A number as the history compares it: E.164 in the account's country, or its digits when not a phone number (an extension). */
function normalised(number: string, country: CountryCode): string {
  const key = `${country}|${number}`;
  const known = normalisedCache.get(key);
  if (known !== undefined) return known;
  const value = toE164(number, country) ?? number.replace(/[^\d+]/g, "");
  if (normalisedCache.size >= NORMALISED_KEPT) normalisedCache.clear();
  normalisedCache.set(key, value);
  return value;
}

interface CallRow {
  interaction_id: string;
  call_id: string;
  /** Gregorian seconds: the first leg's start. */
  timestamp: number;
  duration_seconds: number;
  billing_seconds: number;
  /** inbound: the number called the account; outbound: the account called the number. */
  direction: "inbound" | "outbound";
  agents: { user_id: string; name: string }[];
  queue_id?: string;
  disposition?: Record<string, unknown>;
  recording_ids: string[];
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** The user ids a leg names as an agent: its phone's owner, the disposition's giver. */
function agentIdsOf(leg: StoredDoc): string[] {
  const ids: string[] = [];
  const owner = text(leg.data.owner_id);
  if (owner !== undefined) ids.push(owner);
  const disposition = leg.data.disposition;
  if (typeof disposition === "object" && disposition !== null && !Array.isArray(disposition)) {
    const recipient = text((disposition as Record<string, unknown>).recipient_id);
    if (recipient !== undefined) ids.push(recipient);
  }
  return ids;
}

/** The queue a leg came through, as its disposition names it (CDRs keep no other trace of the queue). */
function queueOf(leg: StoredDoc): string | undefined {
  const disposition = leg.data.disposition;
  return typeof disposition === "object" && disposition !== null && !Array.isArray(disposition) ? text((disposition as Record<string, unknown>).queue_id) : undefined;
}

/** Gathers the legs of one interaction into its row as the walk meets them (newest leg first). */
class CallBuilder {
  readonly legs: StoredDoc[] = [];
  constructor(readonly interactionId: string) {}

  add(leg: StoredDoc): void {
    this.legs.push(leg);
  }

  row(wanted: string, country: CountryCode, names: (id: string) => string, recordings: (interactionId: string) => string[]): CallRow {
    const first = this.legs.reduce((a, b) => (cdrSortKey(b) < cdrSortKey(a) ? b : a));
    const callerIsNumber = typeof first.data.caller_id_number === "string" && normalised(first.data.caller_id_number, country) === wanted;
    const agentIds = [...new Set(this.legs.flatMap(agentIdsOf))];
    const disposition = this.legs.map((l) => l.data.disposition).find((d) => typeof d === "object" && d !== null);
    const queue = this.legs.map(queueOf).find((q) => q !== undefined);
    const end = Math.max(...this.legs.map((l) => num(l.data.timestamp) + num(l.data.duration_seconds)));
    const row: CallRow = {
      interaction_id: this.interactionId,
      call_id: String(first.data.call_id ?? first.id),
      timestamp: num(first.data.timestamp),
      duration_seconds: Math.max(0, end - num(first.data.timestamp)),
      billing_seconds: Math.max(...this.legs.map((l) => num(l.data.billing_seconds))),
      direction: callerIsNumber ? "inbound" : "outbound",
      agents: agentIds.map((id) => ({ user_id: id, name: names(id) })),
      recording_ids: recordings(this.interactionId),
    };
    if (queue !== undefined) row.queue_id = queue;
    if (typeof disposition === "object" && disposition !== null) row.disposition = disposition as Record<string, unknown>;
    return row;
  }
}

function interactionKey(doc: StoredDoc): string {
  return text(doc.data.interaction_id) ?? doc.id;
}

/** The numbers a user's live legs are with: theirs and the legs they are bridged to. */
function liveNumbers(deps: ApiDeps, accountId: string, userId: string, country: CountryCode): Set<string> {
  const channels = deps.calls?.channels;
  const out = new Set<string>();
  if (!channels) return out;
  const add = (c: Channel | undefined) => {
    if (!c) return;
    const data = c.eventData();
    for (const n of [data.caller_id_number, data.callee_id_number]) if (typeof n === "string" && n !== "") out.add(normalised(n, country));
  };
  for (const leg of channels.ofUser(accountId, userId)) {
    if (leg.state === "hungup") continue;
    add(leg);
    if (leg.otherLeg !== undefined) add(channels.get(leg.otherLeg));
  }
  return out;
}

function mayRead(deps: ApiDeps, auth: AuthContext | null, user: StoredDoc | undefined, wanted: string, country: CountryCode, accountId: string): void {
  if (auth?.isAdmin) return;
  if (hasCallMonitor(user)) return;
  if (auth?.ownerId && liveNumbers(deps, accountId, auth.ownerId, country).has(wanted)) return;
  throw new ApiError("forbidden", {
    number: { not_on_call: { message: "an agent may read the history of a number ringing them or on a call with them; supervisors and admins any number" } },
  });
}

function displayName(user: StoredDoc): string {
  const full = [text(user.data.first_name), text(user.data.last_name)].filter((p) => p !== undefined).join(" ");
  return full !== "" ? full : (text(user.data.username) ?? user.id);
}

/** The user whose number it is: their caller ids, or a callflow whose first module rings them. */
function userOfNumber(users: Collection, callflows: Collection, wanted: string, country: CountryCode): StoredDoc | undefined {
  for (const user of users.all()) {
    const ids = user.data.caller_id;
    if (typeof ids !== "object" || ids === null) continue;
    for (const id of Object.values(ids as Record<string, unknown>)) {
      const n = typeof id === "object" && id !== null ? text((id as Record<string, unknown>).number) : undefined;
      if (n !== undefined && normalised(n, country) === wanted) return user;
    }
  }
  for (const flow of callflows.all()) {
    const numbers = Array.isArray(flow.data.numbers) ? flow.data.numbers : [];
    if (!numbers.some((n) => typeof n === "string" && normalised(n, country) === wanted)) continue;
    const module = flow.data.flow;
    if (typeof module !== "object" || module === null) continue;
    const m = module as Record<string, unknown>;
    const data = m.data;
    const id = typeof data === "object" && data !== null ? text((data as Record<string, unknown>).id) : undefined;
    if (m.module === "user" && id !== undefined) return users.get(id);
  }
  return undefined;
}

function messageDate(doc: StoredDoc): string {
  return `${String(num(doc.data.date)).padStart(16, "0")}-${doc.id}`;
}

function pageSizeOf(query: Record<string, string>): Record<string, string> {
  const raw = query.page_size;
  if (raw === undefined) return { ...query, page_size: String(DEFAULT_CALLS_PAGE) };
  if (/^\d+$/.test(raw) && Number(raw) > MAX_CALLS_PAGE) {
    throw new ApiError("validation_error", { page_size: { maximum: { message: `at most ${MAX_CALLS_PAGE} calls a page`, cause: raw } } });
  }
  return query;
}

export function registerCallerHistory(app: FastifyInstance, deps: ApiDeps): void {
  deps.store.equalityIndex(CDRS_COLLECTION, cdrNumberIndex);
  deps.store.equalityIndex(RECORDINGS_COLLECTION, equalityIndexOn("interaction_id"));
  deps.store.equalityIndex(MESSAGES_COLLECTION, equalityIndexOn("contact_id"));

  const handler = async (ctx: Ctx) => {
    const accountId = ctx.params.account_id ?? "";
    const raw = ctx.params.number ?? "";
    if (!NUMBER_PATTERN.test(raw)) {
      throw new ApiError("validation_error", { number: { pattern: { message: "a phone number: digits, optionally after a +", cause: raw } } });
    }
    const query = pageSizeOf(ctx.req.query);
    const queueId = query.queue_id;
    const queue = queueId === undefined ? undefined : (await deps.collection(accountId, "callq_queues")).get(queueId);
    if (queueId !== undefined && !queue) throw new ApiError("validation_error", { queue_id: { not_found: { message: "no queue of this account has this id", cause: queueId } } });
    const plan = pagePlan(true, query);
    if (plan.size === undefined) throw new ApiError("validation_error", { paginate: { enum: { message: "the history is always paged", cause: "false" } } });
    const account = (await deps.global("accounts")).get(accountId)?.data;
    const country = accountCountry(account);
    const wanted = normalised(raw, country);
    const users = await deps.collection(accountId, "users");
    const asker = ctx.auth?.ownerId ? users.get(ctx.auth.ownerId) : undefined;
    mayRead(deps, ctx.auth, asker, wanted, country, accountId);

    const cdrs = await deps.collection(accountId, CDRS_COLLECTION);
    const tail = numberTail(wanted);
    const builder = new PageBuilder<CallBuilder>(plan);
    const calls = new Map<string, CallBuilder>();
    const isTheNumber = (n: unknown) => typeof n === "string" && normalised(n, country) === wanted;
    if (tail !== undefined) {
      cdrs.visit(
        cdrSortKey,
        { descending: plan.descending, ...(plan.startKey === undefined ? {} : { from: plan.startKey }), equal: { field: NUMBER_TAIL_FIELD, keys: [tail] } },
        (leg, key) => {
          if (!isTheNumber(leg.data.caller_id_number) && !isTheNumber(leg.data.callee_id_number)) return true;
          const id = interactionKey(leg);
          const known = calls.get(id);
          if (known) {
            known.add(leg);
            return true;
          }
          const call = new CallBuilder(id);
          if (!builder.offer(call, key)) return false;
          call.add(leg);
          calls.set(id, call);
          return true;
        },
      );
    }
    const page = builder.page();

    const recordings = await deps.collection(accountId, RECORDINGS_COLLECTION);
    const recordingIds = (interactionId: string): string[] => {
      const ids: string[] = [];
      recordings.visit(cdrSortKey, { descending: false, equal: { field: "interaction_id", keys: [`s:${interactionId}`] } }, (doc) => {
        ids.push(doc.id);
        return true;
      });
      return ids;
    };
    const names = (id: string): string => {
      const user = users.get(id);
      return user ? displayName(user) : id;
    };

    const contacts = (await deps.collection(accountId, CONTACTS_COLLECTION)).all().filter((c) => isTheNumber(c.data.phoneNumber));
    const own = contacts.find((c) => c.data.user_id === ctx.auth?.ownerId);
    const readable = ctx.auth?.isAdmin ? contacts : own ? [own] : [];
    const messages = await deps.collection(accountId, MESSAGES_COLLECTION);
    const texts: Record<string, unknown>[] = [];
    if (readable.length > 0) {
      messages.visit(messageDate, { descending: true, equal: { field: "contact_id", keys: readable.map((c) => `s:${c.id}`) } }, (doc) => {
        const d = doc.data;
        texts.push({ id: doc.id, user_id: d.user_id, contact_id: d.contact_id, direction: d.direction, body: d.body, date: d.date });
        return texts.length < TEXTS_SHOWN;
      });
    }

    const user = userOfNumber(users, await deps.collection(accountId, "callflows"), wanted, country);
    const contact = own ?? contacts[0];
    const who: Record<string, unknown> = { number: wanted };
    if (user) {
      who.name = displayName(user);
      who.user_id = user.id;
    } else if (contact) {
      who.name = text(contact.data.fullName) ?? wanted;
      who.contact_id = contact.id;
    }
    const template = text(queue?.data.crm_link) ?? text(account?.crm_link);
    if (template !== undefined) who.crm_link = crmLinkFor(template, wanted);
    return {
      data: { ...who, calls: page.rows.map((c) => c.row(wanted, country, names, recordingIds)), texts },
      ...(page.paging ? { paging: page.paging } : {}),
    };
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/caller_history/:number",
    access: "account",
    tag: "caller_history",
    verbs: {
      GET: {
        summary:
          "Local addition: who a number is, its calls (newest first, paged) with agents, queue, disposition, note and recordings, and its texts (an admin or supervisor any number; an agent a number they are ringing or on a call with)",
        handler,
      },
    },
  });
}
