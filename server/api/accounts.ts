// /v2/accounts/{account_id}: the account document itself (name, realm, language, timezone, the
// blacklists in force), kept in the global accounts collection; its pvt_ fields are never shown.
import type { FastifyInstance } from "fastify";
import { ifMatch, registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { mergePatch } from "../http/patch.js";
import { dataObject, docOutcome, notFound, privateOf, publicFields, storeError, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import type { Collection, StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const accountSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    realm: { type: "string", minLength: 1, maxLength: 253, pattern: "^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$" },
    language: { type: "string", pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$" },
    timezone: { type: "string", minLength: 1, maxLength: 64 },
    enabled: { type: "boolean" },
    blacklists: { type: "array", uniqueItems: true, items: { type: "string", pattern: "^[0-9a-f]{32}$" } },
    announce_eavesdrop: { type: "boolean", description: "local addition: agents see when a supervisor eavesdrops on their call (whisper and barge always show)" },
  },
};

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function sameText(a: unknown, b: unknown): boolean {
  return typeof a === "string" && typeof b === "string" && a.toLowerCase() === b.toLowerCase();
}

export function registerAccounts(app: FastifyInstance, deps: ApiDeps): void {
  const check = async (data: Data, existing: StoredDoc, accounts: Collection): Promise<void> => {
    const others = accounts.all().filter((a) => a.id !== existing.id);
    // Logins find the account by name or realm, case-insensitively: each must name one account.
    if (others.some((a) => sameText(a.data.name, data.name))) throw fieldError("name", "unique", "account name already in use", data.name);
    if (data.realm !== undefined && others.some((a) => sameText(a.data.realm, data.realm))) {
      throw fieldError("realm", "unique", "realm already in use", data.realm);
    }
    if (typeof data.timezone === "string" && !isTimeZone(data.timezone)) {
      throw fieldError("timezone", "enum", "Value is not a time zone of the IANA database", data.timezone);
    }
    // A token only reaches its own account, and a disabled account refuses every token and
    // login: disabling it here would lock everyone out with no way back through the API.
    if (data.enabled === false) throw fieldError("enabled", "forbidden", "an account cannot disable itself");
    if (Array.isArray(data.blacklists)) {
      const lists = await deps.collection(existing.id, "blacklists");
      const missing = data.blacklists.filter((id) => typeof id === "string" && !lists.has(id));
      if (missing.length) throw fieldError("blacklists", "not_found", "no blacklist with this id in the account", missing);
    }
  };

  const accountOf = async (ctx: Ctx): Promise<{ accounts: Collection; account: StoredDoc }> => {
    const accounts = await deps.global("accounts");
    const id = ctx.params.account_id ?? "";
    const account = accounts.get(id);
    if (!account) throw notFound(id);
    return { accounts, account };
  };

  const write = async (ctx: Ctx, verb: "update" | "patch"): Promise<Outcome> => {
    const { accounts, account } = await accountOf(ctx);
    const input = dataObject(ctx);
    // `id` names the document, it is not one of its fields; clients send it back from a GET.
    const { id: _id, ...data } = verb === "patch" ? mergePatch(publicFields(account.data), input) : input;
    // The realm is the account's SIP domain and a login key: a write may change it, not drop it.
    if (data.realm === undefined && account.data.realm !== undefined) data.realm = account.data.realm;
    validate(accountSchema, data);
    await check(data, account, accounts);
    try {
      return docOutcome(await accounts.update(account.id, { ...data, ...privateOf(account.data) }, { rev: ifMatch(ctx.request) }));
    } catch (err) {
      throw storeError(err);
    }
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id",
    access: "account",
    tag: "accounts",
    verbs: {
      GET: {
        summary: "Read the account document",
        handler: async (ctx) => {
          const { account } = await accountOf(ctx);
          return docOutcome(account);
        },
      },
      POST: {
        summary: "Replace the account document (admins)",
        admin: true,
        body: accountSchema,
        handler: (ctx) => write(ctx, "update"),
      },
      PATCH: {
        summary: "Change some fields of the account document (admins)",
        admin: true,
        handler: (ctx) => write(ctx, "patch"),
      },
    },
  });
}
