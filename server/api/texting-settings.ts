// /v2/accounts/{account_id}/users/{user_id}/texting: a user's texting settings as the console's
// integration settings use them: `{account_uid, access_token, numbers, relay_url}`. POST
// `{action:"rotate"}` issues a new token, `{relay_url}` sets (or with null clears) the relay URL,
// `{numbers}` (admins only) assigns texting numbers. The user themself or an admin.
// /texting/attempts lists the user's relay attempts, newest first.
import type { FastifyInstance } from "fastify";
import { registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { dataObject, listOutcome, notFound, publicFields } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import { isE164, NumberTakenError, RELAY_ATTEMPTS_COLLECTION, relayAttemptOrder, settingsView, type TextingService } from "../texting/index.js";
import type { ApiDeps } from "./deps.js";

export const TEXTING_ACTIONS = ["rotate"] as const;
const MAX_NUMBERS = 20;

const settingsSchema: JsonSchema = {
  type: "object",
  properties: {
    action: { type: "string", enum: [...TEXTING_ACTIONS], description: "rotate: issue a new access token (the old one stops working)" },
    relay_url: { type: ["string", "null"], maxLength: 2048, description: "http(s) URL every message is relayed to; null or empty clears it" },
    numbers: { type: "array", maxItems: MAX_NUMBERS, uniqueItems: true, items: { type: "string" }, description: "E.164 texting numbers assigned to the user (admins only)" },
  },
};

function relayUrl(value: unknown): string | null {
  if (value === null || value === "") return null;
  const text = String(value);
  let url: URL | null = null;
  try {
    url = new URL(text);
  } catch {
    url = null;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) throw fieldError("relay_url", "format", "Value is not a valid http(s) URL", value);
  return text;
}

/** The texting service, or a 400 when the server runs without it. */
export function textingService(deps: ApiDeps): TextingService {
  if (!deps.texting) throw new ApiError("invalid_data", { texting: { unavailable: { message: "texting is not running" } } });
  return deps.texting;
}

export function registerTextingSettings(app: FastifyInstance, deps: ApiDeps): void {
  const texting = (): TextingService => textingService(deps);

  /** The user named in the path, who must exist; only they or an admin may go on. */
  const userOf = async (ctx: Ctx): Promise<{ accountId: string; userId: string }> => {
    const accountId = ctx.params.account_id ?? "";
    const userId = ctx.params.id ?? "";
    if (!(await deps.collection(accountId, "users")).has(userId)) throw notFound(userId);
    if (!ctx.auth?.isAdmin && ctx.auth?.ownerId !== userId) {
      throw new ApiError("forbidden", { user: { forbidden: { message: "only the user or an admin may see these texting settings" } } });
    }
    return { accountId, userId };
  };

  const change = async (ctx: Ctx): Promise<Outcome> => {
    const { accountId, userId } = await userOf(ctx);
    const data = dataObject(ctx);
    const action = data.action;
    // An action the service does not know is refused as a channel's is: invalid data.
    if (typeof action === "string" && !TEXTING_ACTIONS.some((a) => a === action)) {
      throw new ApiError("invalid_data", { action: { enum: { message: `unknown action; use one of ${TEXTING_ACTIONS.join(", ")}`, value: action } } });
    }
    validate(settingsSchema, data);
    if (action === undefined && !("relay_url" in data) && data.numbers === undefined) {
      throw fieldError("data", "required", "send action, relay_url or numbers");
    }
    const numbers = data.numbers as string[] | undefined;
    if (numbers !== undefined) {
      if (!ctx.auth?.isAdmin) throw new ApiError("forbidden", { numbers: { admin: { message: "only an admin assigns texting numbers" } } });
      const bad = numbers.findIndex((n) => !isE164(n));
      if (bad >= 0) throw fieldError(`numbers.${bad}`, "e164", "Value is not an E.164 phone number", numbers[bad]);
    }
    const url = "relay_url" in data ? relayUrl(data.relay_url) : undefined;
    const service = texting();
    let doc: StoredDoc = await service.settings.ensure(accountId, userId);
    try {
      if (numbers !== undefined) doc = await service.settings.setNumbers(accountId, userId, numbers);
    } catch (err) {
      if (err instanceof NumberTakenError) throw fieldError("numbers", "unique", `${err.number} is assigned to another user`, err.number);
      throw err;
    }
    if (url !== undefined) doc = await service.settings.setRelayUrl(accountId, userId, url);
    if (action === "rotate") doc = await service.settings.rotate(accountId, userId);
    return { data: settingsView(doc), revision: doc.rev };
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/texting",
    access: "account",
    tag: "texting",
    verbs: {
      GET: {
        summary: "A user's texting settings: account_uid, access_token, numbers, relay_url (the user or an admin)",
        handler: async (ctx) => {
          const { accountId, userId } = await userOf(ctx);
          const doc = await texting().settings.ensure(accountId, userId);
          return { data: settingsView(doc), revision: doc.rev };
        },
      },
      POST: { summary: "Rotate the access token (action rotate), set relay_url, or (admins) assign numbers", body: settingsSchema, handler: change },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/texting/attempts",
    access: "account",
    tag: "texting",
    verbs: {
      GET: {
        summary: "The user's texting relay attempts, newest first",
        handler: async (ctx) => {
          const { accountId, userId } = await userOf(ctx);
          const log = await deps.collection(accountId, RELAY_ATTEMPTS_COLLECTION);
          return listOutcome(log, ctx, { sortKey: relayAttemptOrder, descending: true, row: (doc) => publicFields(doc.data), where: (doc) => doc.data.user_id === userId });
        },
      },
    },
  });
}
