// /v2/accounts/{account_id}/blacklists: blocklists of caller-id numbers, keys kept in E.164,
// the id-less POST that updates the list named by data.id, and the account's `blacklists` links.
import type { FastifyInstance } from "fastify";
import type { CountryCode } from "libphonenumber-js";
import { accountCountry, DEFAULT_COUNTRY, toE164 } from "../phone-numbers.js";
import { ApiError } from "../http/errors.js";
import type { Handler } from "../http/endpoint.js";
import { isObject } from "../http/request.js";
import { dataObject, registerDocResource, type Data, type ResourceOps } from "../http/resource.js";
import { fieldError, type FieldErrors, type JsonSchema } from "../http/validation.js";
import { ID_PATTERN, type StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const blacklistSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    numbers: { type: "object", additionalProperties: { type: "object" } },
    should_block_anonymous: { type: "boolean" },
    // Kazoo's schema: flags set by external applications, kept as they are sent.
    flags: { type: "array", items: { type: "string" } },
  },
};

/** The id-less POST names its list in the body, so its body schema needs the id. */
const namedUpdateSchema: JsonSchema = {
  ...blacklistSchema,
  required: ["id", "name"],
  properties: { ...(blacklistSchema.properties as Record<string, unknown>), id: { type: "string", pattern: ID_PATTERN.source } },
};

/**
 * Keys turned to E.164; two spellings of one number merge into one entry. A key that is not a
 * valid number stays as sent so the check can name it.
 */
export function normaliseNumbers(numbers: Data, country: CountryCode): Data {
  const out: Data = {};
  for (const [key, value] of Object.entries(numbers)) {
    const e164 = toE164(key, country) ?? key;
    const earlier = out[e164];
    out[e164] = isObject(earlier) && isObject(value) ? { ...earlier, ...value } : value;
  }
  return out;
}

function badNumbers(numbers: Data): FieldErrors {
  const errors: FieldErrors = {};
  for (const key of Object.keys(numbers)) {
    // Normalised keys parse to themselves; anything else could not be read as a number.
    if (toE164(key, DEFAULT_COUNTRY) !== key) {
      errors[`numbers.${key}`] = { e164: { message: "Value is not a valid phone number", value: key } };
    }
  }
  return errors;
}

export function blacklistRow(doc: StoredDoc): Data {
  return { id: doc.id, name: doc.data.name };
}

export function registerBlacklists(app: FastifyInstance, deps: ApiDeps): void {
  const countryOf = async (accountId: string): Promise<CountryCode> => accountCountry((await deps.global("accounts")).get(accountId)?.data);

  // The id-less POST is the item POST with the id taken from the body: both share one
  // validate-then-write path (If-Match included).
  const updateNamed =
    (ops: ResourceOps): Handler =>
    async (ctx) => {
      const id = dataObject(ctx).id;
      if (id === undefined) throw fieldError("id", "required", "the id of the blocklist to update is required");
      if (typeof id !== "string") throw fieldError("id", "type", "Value is not of type string", id);
      return ops.update(ctx, id);
    };

  registerDocResource(app, deps, {
    name: "blacklists",
    collection: "blacklists",
    schema: blacklistSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: async (data, ctx) => {
      const numbers = data.numbers ?? {};
      return {
        should_block_anonymous: false,
        ...data,
        numbers: isObject(numbers) ? normaliseNumbers(numbers, await countryOf(ctx.accountId)) : numbers,
      };
    },
    check: (data) => {
      const errors = badNumbers(data.numbers as Data);
      if (Object.keys(errors).length) throw new ApiError("validation_error", errors);
    },
    afterDelete: async (doc, { accountId }) => {
      // The account must never point at a list that is gone.
      const accounts = await deps.global("accounts");
      const account = accounts.get(accountId);
      const linked = account?.data.blacklists;
      if (!account || !Array.isArray(linked) || !linked.includes(doc.id)) return;
      await accounts.update(account.id, { ...account.data, blacklists: linked.filter((id) => id !== doc.id) });
    },
    row: blacklistRow,
    collectionVerbs: (ops) => ({
      POST: { summary: "Update the blocklist named by data.id", admin: true, body: namedUpdateSchema, handler: updateNamed(ops) },
    }),
  });
}
