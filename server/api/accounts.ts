// /v2/accounts/{account_id}: the account document itself (name, realm, language, timezone, the
// blacklists in force), kept in the global accounts collection; its pvt_ fields are never shown.
// Also the account tree of accounts.md: every account here is the root of its own tree (no
// parent, no children), and the verbs that create, delete, move or promote accounts are refused.
import type { FastifyInstance } from "fastify";
import { ApiError } from "../http/errors.js";
import { ifMatch, registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { paginate } from "../http/paging.js";
import { mergePatch } from "../http/patch.js";
import { dataObject, notFound, privateOf, publicFields, storeError, type Data } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import { ID_PATTERN, type Collection, type StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";
import { crmLinkSchema } from "./crm-link.js";

export const accountSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    realm: { type: "string", minLength: 1, maxLength: 253, pattern: "^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$" },
    language: { type: "string", pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$" },
    timezone: { type: "string", minLength: 1, maxLength: 64 },
    enabled: { type: "boolean" },
    blacklists: { type: "array", uniqueItems: true, items: { type: "string", pattern: ID_PATTERN.source } },
    announce_eavesdrop: { type: "boolean", description: "local addition: agents see when a supervisor eavesdrops on their call (whisper and barge always show)" },
    crm_link: crmLinkSchema,
  },
};

/**
 * What Kazoo shows of an account's private fields (its `leak_pvt_fields`), as this server has
 * them: no account is a reseller or a superduper admin, and billing is not served. Read-only: a
 * write that sends them back (a client PUTs back what it read) has them dropped.
 */
const SHOWN_PRIVATE = ["billing_mode", "is_reseller", "reseller_id", "superduper_admin", "wnm_allow_additions"] as const;

/** The account schema's empty-object defaults Kazoo fills in on create, shown while unset. */
const EMPTY_DEFAULTS = ["call_restriction", "caller_id", "dial_plan", "music_on_hold", "preflow", "ringtones"] as const;

/** The account as accounts.md shows it: its data, the defaults, its id, created, the shown private fields. */
export function accountView(doc: StoredDoc): Data {
  const defaults: Data = {};
  for (const key of EMPTY_DEFAULTS) defaults[key] = {};
  return {
    ...defaults,
    ...publicFields(doc.data),
    id: doc.id,
    created: doc.created,
    billing_mode: "manual",
    is_reseller: false,
    // Every account is its own reseller's root, as user_auth answers.
    reseller_id: doc.id,
    superduper_admin: false,
    wnm_allow_additions: false,
  };
}

function accountOutcome(doc: StoredDoc): Outcome {
  return { data: accountView(doc), revision: doc.rev };
}

/** Every account here is the root of its own tree: nothing above it, nothing below it. */
function emptyTreeList(ctx: Ctx): Outcome {
  const page = paginate<Data>([], { key: (row) => String(row.id) }, ctx.req.query);
  return { data: page.rows, paging: page.paging };
}

const moveSchema: JsonSchema = { type: "object", required: ["to"], properties: { to: { type: "string", minLength: 1 } } };

/** Kazoo's refusal (403) of a verb only a superduper admin may use: no one is one here. */
function superduperOnly(cause: string): never {
  throw new ApiError("forbidden", { cause });
}

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
    for (const key of SHOWN_PRIVATE) delete data[key];
    // The realm is the account's SIP domain and a login key: a write may change it, not drop it.
    if (data.realm === undefined && account.data.realm !== undefined) data.realm = account.data.realm;
    validate(accountSchema, data);
    await check(data, account, accounts);
    try {
      return accountOutcome(await accounts.update(account.id, { ...data, ...privateOf(account.data) }, { rev: ifMatch(ctx.request) }));
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
          return accountOutcome(account);
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
      PUT: {
        summary: "Create a child account: refused (403), each account here is a root of its own",
        admin: true,
        answers: [],
        handler: async () => superduperOnly("accounts are not created through the API on this server"),
      },
    },
  });

  // Kazoo's `/v2/accounts` takes PUT only (a new top-level account, by a superduper admin).
  registerEndpoint(app, deps, {
    path: "/v2/accounts",
    access: "token",
    tag: "accounts",
    verbs: {
      PUT: {
        summary: "Create an account: refused (403), accounts are not created through the API here",
        admin: true,
        answers: [],
        handler: async () => superduperOnly("accounts are not created through the API on this server"),
      },
    },
  });

  const treeList = (path: string, summary: string): void => {
    registerEndpoint(app, deps, {
      path: `/v2/accounts/:account_id/${path}`,
      access: "account",
      tag: "accounts",
      verbs: {
        GET: {
          summary,
          handler: async (ctx) => {
            await accountOf(ctx);
            return emptyTreeList(ctx);
          },
        },
      },
    });
  };
  treeList("parents", "The account's parents: none, every account is a root");
  treeList("tree", "The account's ancestors the caller may see: none, every account is a root");
  treeList("children", "The account's children: none, accounts are not nested here");
  treeList("descendants", "The account's descendants: none, accounts are not nested here");

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/siblings",
    access: "account",
    tag: "accounts",
    verbs: {
      GET: {
        // Kazoo lists one's own account's siblings only for a superduper admin.
        summary: "The account's siblings: refused (403) for one's own account, as Kazoo does for all but superduper admins",
        answers: [],
        handler: async () => superduperOnly("siblings of one's own account are listed for superduper admins only"),
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/reseller",
    access: "account",
    tag: "accounts",
    verbs: {
      PUT: { summary: "Promote to reseller: refused (403), superduper admins only", admin: true, answers: [], handler: async () => superduperOnly("resellers are promoted by superduper admins only") },
      DELETE: { summary: "Demote a reseller: refused (403), superduper admins only", admin: true, answers: [], handler: async () => superduperOnly("resellers are demoted by superduper admins only") },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/move",
    access: "account",
    tag: "accounts",
    verbs: {
      POST: {
        summary: "Move the account under another: refused (403), superduper admins only",
        admin: true,
        answers: [],
        body: moveSchema,
        handler: async (ctx) => {
          // As Kazoo: a missing destination is a field error before the caller is refused.
          validate(moveSchema, dataObject(ctx));
          return superduperOnly("accounts are moved by superduper admins only");
        },
      },
    },
  });
}
