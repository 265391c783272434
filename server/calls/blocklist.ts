// The account's blocklists applied to a caller: a listed number is refused 603, and a caller who
// hides its id is refused 433 when a list in force says should_block_anonymous.
import type { CountryCode } from "libphonenumber-js";
import { accountCountry, toE164 } from "../phone-numbers.js";
import type { Store, StoredDoc } from "../store/index.js";
import type { CallParty } from "../sip/call-signalling.js";

export type Refusal = { code: 603; reason: "blocked" } | { code: 433; reason: "anonymous" };

const ANONYMOUS_USERS = new Set(["", "anonymous", "restricted", "unknown", "unavailable", "private"]);

/** A caller without caller id: an anonymous From (RFC 3323) or a Privacy header asking for it. */
export function isAnonymous(from: CallParty, headers: ReadonlyMap<string, string[]>): boolean {
  if (ANONYMOUS_USERS.has(from.user.toLowerCase())) return true;
  if (from.display?.trim().toLowerCase() === "anonymous") return true;
  const privacy = (headers.get("privacy") ?? []).join(";").toLowerCase();
  return privacy.split(/[;,\s]+/).some((token) => token === "id" || token === "user");
}

/** The refusal the account's blocklists give this caller, if any. */
export async function blocklistRefusal(store: Store, account: StoredDoc | undefined, callerNumber: string, anonymous: boolean): Promise<Refusal | undefined> {
  const ids = account?.data.blacklists;
  if (!account || !Array.isArray(ids) || ids.length === 0) return undefined;
  const lists = await store.account(account.id, "blacklists");
  const forms = numberForms(callerNumber, accountCountry(account.data));
  for (const id of ids) {
    const list = typeof id === "string" ? lists.get(id) : undefined;
    if (!list) continue;
    if (anonymous && list.data.should_block_anonymous === true) return { code: 433, reason: "anonymous" };
    const numbers = list.data.numbers;
    if (!anonymous && typeof numbers === "object" && numbers !== null && forms.some((n) => Object.hasOwn(numbers, n))) {
      return { code: 603, reason: "blocked" };
    }
  }
  return undefined;
}

/** The number as sent and in E.164, the form list keys are kept in (api/blacklists.ts). */
function numberForms(number: string, country: CountryCode): string[] {
  const e164 = toE164(number, country);
  return e164 ? [number, e164] : [number];
}
