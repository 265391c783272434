// Each user's texting settings (collection `texting_settings`, one document per user, id = the
// user id): the numbers assigned to them, their relay URL and their API access token, and the
// Bearer `<account_uid>:<access_token>` check of the texting API.
//
// The access token is kept as issued (`pvt_access_token`, never listed or filterable), not
// hashed: the console must show it to its user again, as the account API key is shown.
import { timingSafeEqual } from "node:crypto";
import type { RandomSource } from "../clock.js";
import { ID_PATTERN, type Collection, type StoredDoc, type Store } from "../store/index.js";

export const SETTINGS_COLLECTION = "texting_settings";

/** Who a valid texting token speaks for. */
export interface TextingIdentity {
  accountId: string;
  userId: string;
  numbers: readonly string[];
}

/** The settings as `GET /v2/accounts/{id}/users/{id}/texting` shows them. */
export interface SettingsView {
  account_uid: string;
  access_token: string;
  numbers: string[];
  relay_url: string | null;
}

export class NumberTakenError extends Error {
  override name = "NumberTakenError";

  constructor(
    readonly number: string,
    readonly ownerId: string,
  ) {
    super(`${number} is already assigned to user ${ownerId}`);
  }
}

export function newAccessToken(random: RandomSource): string {
  return random.bytes(24).toString("hex");
}

export function numbersOf(doc: StoredDoc | undefined): string[] {
  const numbers = doc?.data.numbers;
  return Array.isArray(numbers) ? numbers.filter((n): n is string => typeof n === "string") : [];
}

export function relayUrlOf(doc: StoredDoc | undefined): string | null {
  const url = doc?.data.relay_url;
  return typeof url === "string" && url !== "" ? url : null;
}

export function settingsView(doc: StoredDoc): SettingsView {
  return {
    account_uid: doc.id,
    access_token: String(doc.data.pvt_access_token ?? ""),
    numbers: numbersOf(doc),
    relay_url: relayUrlOf(doc),
  };
}

export class TextingSettings {
  /** User id to account id, so a Bearer check does not look through every account. */
  readonly #accountOf = new Map<string, string>();

  constructor(private readonly store: Store) {}

  collection(accountId: string): Promise<Collection> {
    return this.store.account(accountId, SETTINGS_COLLECTION);
  }

  /** The user's settings, made (with a fresh token and no numbers) the first time they are asked for. */
  async ensure(accountId: string, userId: string): Promise<StoredDoc> {
    const settings = await this.collection(accountId);
    this.#accountOf.set(userId, accountId);
    // Looked up and created in one turn, so two first requests cannot both create it.
    return settings.get(userId) ?? settings.create({ numbers: [], relay_url: null, pvt_access_token: newAccessToken(this.store.random) }, { id: userId });
  }

  async rotate(accountId: string, userId: string): Promise<StoredDoc> {
    const doc = await this.ensure(accountId, userId);
    const settings = await this.collection(accountId);
    return settings.update(userId, { ...doc.data, pvt_access_token: newAccessToken(this.store.random) });
  }

  async setRelayUrl(accountId: string, userId: string, url: string | null): Promise<StoredDoc> {
    const doc = await this.ensure(accountId, userId);
    const settings = await this.collection(accountId);
    return settings.update(userId, { ...doc.data, relay_url: url });
  }

  /** Assigns exactly these numbers; one number belongs to one user, so inbound texts have one home. */
  async setNumbers(accountId: string, userId: string, numbers: readonly string[]): Promise<StoredDoc> {
    const doc = await this.ensure(accountId, userId);
    const settings = await this.collection(accountId);
    for (const number of numbers) {
      const owner = this.#ownerIn(settings, number);
      if (owner !== null && owner !== userId) throw new NumberTakenError(number, owner);
    }
    return settings.update(userId, { ...doc.data, numbers: [...new Set(numbers)] });
  }

  /** The user a number is assigned to in this account, or null. */
  async ownerOf(accountId: string, number: string): Promise<string | null> {
    return this.#ownerIn(await this.collection(accountId), number);
  }

  #ownerIn(settings: Collection, number: string): string | null {
    return settings.all().find((doc) => numbersOf(doc).includes(number))?.id ?? null;
  }

  /** The identity behind `Authorization: Bearer <account_uid>:<access_token>`, or null. */
  async authenticate(authorization: string | undefined): Promise<TextingIdentity | null> {
    const m = typeof authorization === "string" ? /^Bearer\s+([^:\s]+):(\S+)$/i.exec(authorization.trim()) : null;
    const userId = m?.[1]?.toLowerCase();
    const token = m?.[2];
    if (!userId || !token || !ID_PATTERN.test(userId)) return null;
    const accountId = this.#accountOf.get(userId) ?? (await this.#findAccount(userId));
    if (accountId === null) return null;
    const doc = (await this.collection(accountId)).get(userId);
    if (!doc || !sameSecret(String(doc.data.pvt_access_token ?? ""), token)) return null;
    // A deleted or disabled user's token stops working with them.
    const user = (await this.store.account(accountId, "users")).get(userId);
    if (!user || user.data.enabled === false) return null;
    return { accountId, userId, numbers: numbersOf(doc) };
  }

  async #findAccount(userId: string): Promise<string | null> {
    const accounts = await this.store.global("accounts");
    for (const account of accounts.all()) {
      if ((await this.collection(account.id)).has(userId)) {
        this.#accountOf.set(userId, account.id);
        return account.id;
      }
    }
    return null;
  }
}

function sameSecret(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return expected !== "" && a.length === b.length && timingSafeEqual(a, b);
}
