// Authentication endpoints: PUT /v2/user_auth (credentials hash), PUT /v2/api_auth (account API
// key), GET and DELETE /v2/token_auth (describe, revoke), GET /v2/accounts/{id}/api_key.
import type { FastifyInstance } from "fastify";
import { toGregorianSeconds } from "../clock.js";
import { ApiError } from "../http/errors.js";
import { ifMatch, registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { dataObject, storeError } from "../http/resource.js";
import { validate, type JsonSchema } from "../http/validation.js";
import type { LoginResult } from "../auth/index.js";
import { identityKey, type LoginAttempt } from "../auth/throttle.js";
import type { ApiDeps } from "./deps.js";

export const USER_AUTH_SCHEMA: JsonSchema = {
  type: "object",
  required: ["credentials"],
  properties: {
    credentials: { type: "string", pattern: "^([0-9a-fA-F]{32}|[0-9a-fA-F]{40})$" },
    method: { type: "string", enum: ["md5", "sha"] },
    account_name: { type: "string", minLength: 1, maxLength: 128 },
    account_realm: { type: "string", minLength: 1, maxLength: 253 },
    phone_number: { type: "string", minLength: 1, maxLength: 32 },
  },
  anyOf: [{ required: ["account_name"] }, { required: ["account_realm"] }, { required: ["phone_number"] }],
};

export const API_AUTH_SCHEMA: JsonSchema = {
  type: "object",
  required: ["api_key"],
  properties: { api_key: { type: "string", minLength: 1, maxLength: 256 } },
};

export function registerAuth(app: FastifyInstance, deps: ApiDeps): void {
  const login = async (ctx: Ctx, attempt: LoginAttempt, check: () => Promise<LoginResult | null>): Promise<Outcome> => {
    const throttle = deps.auth.throttle;
    const refuse = (waitMs: number): ApiError => {
      const seconds = Math.max(1, Math.ceil(waitMs / 1000));
      ctx.reply.header("Retry-After", String(seconds));
      return new ApiError("too_many_requests", { retry_after_s: seconds });
    };
    const sourceWait = throttle.sourceWait(attempt);
    if (sourceWait > 0) throw refuse(sourceWait);
    const inBackOff = throttle.identityWait(attempt) > 0;
    const result = await check();
    if (!result) {
      throttle.failed(attempt);
      if (inBackOff) throw refuse(throttle.identityWait(attempt));
      throw new ApiError("invalid_credentials", { credentials: { invalid: { message: "invalid credentials" } } });
    }
    throttle.succeeded(attempt);
    const account = result.account;
    return {
      status: 201,
      authToken: result.token,
      data: {
        account_id: account.id,
        // Kazoo leaves owner_id out for an API key's token, which no user owns.
        ...(result.user ? { owner_id: result.user.id } : {}),
        apps: [],
        language: typeof account.data.language === "string" ? account.data.language : "en-US",
        is_reseller: false,
        reseller_id: account.id,
        account_name: account.data.name,
      },
    };
  };

  registerEndpoint(app, deps, {
    path: "/v2/user_auth",
    access: "public",
    tag: "auth",
    verbs: {
      PUT: {
        summary: "Log in with md5 (or sha1) of lowercase(username):password and an account name, realm or number",
        body: USER_AUTH_SCHEMA,
        handler: async (ctx) => {
          const data = dataObject(ctx);
          validate(USER_AUTH_SCHEMA, data);
          const names = {
            account_name: typeof data.account_name === "string" ? data.account_name : undefined,
            account_realm: typeof data.account_realm === "string" ? data.account_realm : undefined,
            phone_number: typeof data.phone_number === "string" ? data.phone_number : undefined,
          };
          const account = await deps.auth.findAccount(names);
          const attempt = { identity: identityKey(names, account?.id), source: ctx.request.ip };
          return login(ctx, attempt, () =>
            deps.auth.userLogin(
              { ...names, credentials: String(data.credentials), method: typeof data.method === "string" ? data.method : undefined },
              account,
            ),
          );
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/api_auth",
    access: "public",
    tag: "auth",
    verbs: {
      PUT: {
        summary: "Log in with the account's API key",
        body: API_AUTH_SCHEMA,
        handler: async (ctx) => {
          const data = dataObject(ctx);
          validate(API_AUTH_SCHEMA, data);
          // A key names no account before it is checked: all API-key attempts are one identity.
          return login(ctx, { identity: "api_key", source: ctx.request.ip }, () => deps.auth.apiLogin(String(data.api_key)));
        },
      },
    },
  });

  /** What Kazoo tells about a token (token_auth.md, user_authentication.md), then the local fields. */
  const describeToken = async (ctx: Ctx): Promise<Outcome> => {
    const t = ctx.auth ? await deps.auth.describe(ctx.auth.token) : null;
    if (!t || !ctx.auth) throw new ApiError("invalid_credentials");
    const account = (await deps.global("accounts")).get(t.account_id);
    return {
      data: {
        id: ctx.auth.token,
        account_id: t.account_id,
        account_name: account?.data.name,
        ...(t.owner_id === null ? {} : { owner_id: t.owner_id }),
        method: t.method === "api_auth" ? "cb_api_auth" : "cb_user_auth",
        apps: [],
        language: typeof account?.data.language === "string" ? account.data.language : "en-US",
        is_reseller: false,
        reseller_id: t.account_id,
        is_admin: ctx.auth.isAdmin,
        created: t.created,
        last_used: toGregorianSeconds(t.last_used),
        expires_in: t.expires_in,
      },
    };
  };

  registerEndpoint(app, deps, {
    path: "/v2/token_auth",
    access: "token",
    tag: "auth",
    verbs: {
      GET: {
        summary: "Describe the token used",
        handler: describeToken,
      },
      DELETE: {
        summary: "Revoke the token used",
        handler: async (ctx) => {
          if (ctx.auth) await deps.auth.tokens.revoke(ctx.auth.token);
          return { data: {} };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/user_auth/:token",
    access: "token",
    tag: "auth",
    verbs: {
      GET: {
        summary: "Describe the token in the path: the caller's own (user_authentication.md \"Fetch Token Auth Information\")",
        handler: async (ctx) => {
          // Only one's own: describing a token slides its expiry, and a token is not a thing to look up.
          if (ctx.params.token !== ctx.auth?.token) throw new ApiError("bad_identifier", { cause: "token" });
          return describeToken(ctx);
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/api_key",
    access: "account",
    tag: "accounts",
    verbs: {
      GET: {
        summary: "Show the account's API key (admins)",
        admin: true,
        handler: async (ctx) => {
          const account = (await deps.global("accounts")).get(ctx.params.account_id ?? "");
          if (!account) throw new ApiError("bad_identifier", { cause: ctx.params.account_id });
          return { data: { api_key: account.data.pvt_api_key } };
        },
      },
      PUT: {
        summary: "Make a new API key for the account, ending the old one (admins)",
        admin: true,
        handler: async (ctx) => {
          const accounts = await deps.global("accounts");
          const account = accounts.get(ctx.params.account_id ?? "");
          if (!account) throw new ApiError("bad_identifier", { cause: ctx.params.account_id });
          // The store's random source is crypto-strength (systemRandom): an API key must be unguessable.
          const apiKey = deps.store.random.bytes(32).toString("hex");
          try {
            await accounts.update(account.id, { ...account.data, pvt_api_key: apiKey }, { rev: ifMatch(ctx.request) });
          } catch (err) {
            throw storeError(err);
          }
          // A new key is made because the old one may have leaked: what it opened closes with it.
          await deps.auth.tokens.revokeOwner(account.id, null);
          return { data: { api_key: apiKey } };
        },
      },
    },
  });
}
