// /v2/accounts/{account_id}/users/{user_id}/preferences (local addition): what a user sets for
// themself from the console without being an admin: do not disturb (Kazoo's own user field
// `do_not_disturb.enabled`) and auto-answer of queue offers (the local field `auto_answer`).
// Written into the user document, so the users API shows them and admins may set them there too.
import type { FastifyInstance } from "fastify";
import type { AuthContext, Ctx } from "../http/endpoint.js";
import { registerEndpoint } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { isObject } from "../http/request.js";
import { dataObject, notFound, storeError, type Data } from "../http/resource.js";
import { validate, type JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";
import { AUTO_ANSWER_SCHEMA } from "./users.js";

export const DEFAULT_AUTO_ANSWER_DELAY_S = 3;

const preferencesSchema: JsonSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    do_not_disturb: { type: "object", additionalProperties: false, properties: { enabled: { type: "boolean" } } },
    auto_answer: { ...AUTO_ANSWER_SCHEMA, additionalProperties: false },
  },
};

export interface Preferences {
  do_not_disturb: { enabled: boolean };
  auto_answer: { enabled: boolean; delay_s: number };
}

export function preferencesOf(data: Data): Preferences {
  const dnd = isObject(data.do_not_disturb) ? data.do_not_disturb : {};
  const auto = isObject(data.auto_answer) ? data.auto_answer : {};
  return {
    do_not_disturb: { enabled: dnd.enabled === true },
    auto_answer: { enabled: auto.enabled === true, delay_s: typeof auto.delay_s === "number" ? auto.delay_s : DEFAULT_AUTO_ANSWER_DELAY_S },
  };
}

/** The user themself or an admin (API keys are). */
function maySet(auth: AuthContext | null, userId: string): void {
  if (auth && (auth.isAdmin || auth.ownerId === userId)) return;
  throw new ApiError("forbidden", { user: { self_or_admin: { message: "only the user themself or an account admin may read or change a user's preferences" } } });
}

export function registerUserPreferences(app: FastifyInstance, deps: ApiDeps): void {
  const userOf = async (ctx: Ctx): Promise<StoredDoc> => {
    const id = ctx.params.id ?? "";
    maySet(ctx.auth, id);
    const user = (await deps.collection(ctx.params.account_id ?? "", "users")).get(id);
    if (!user) throw notFound(id);
    return user;
  };
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/preferences",
    access: "account",
    tag: "users",
    verbs: {
      GET: {
        summary: "Local addition: the user's do not disturb and auto-answer (the user themself or an admin)",
        handler: async (ctx) => ({ data: preferencesOf((await userOf(ctx)).data) }),
      },
      PATCH: {
        summary: "Local addition: set the user's do not disturb or auto-answer (the user themself or an admin)",
        body: preferencesSchema,
        handler: async (ctx) => {
          const user = await userOf(ctx);
          const input = dataObject(ctx);
          validate(preferencesSchema, input);
          const before = preferencesOf(user.data);
          const next: Data = { ...user.data };
          if (isObject(input.do_not_disturb)) next.do_not_disturb = { ...before.do_not_disturb, ...input.do_not_disturb };
          if (isObject(input.auto_answer)) next.auto_answer = { ...before.auto_answer, ...input.auto_answer };
          const users = await deps.collection(ctx.params.account_id ?? "", "users");
          try {
            const saved = await users.update(user.id, next, { rev: user.rev });
            return { data: preferencesOf(saved.data), revision: saved.rev };
          } catch (err) {
            throw storeError(err);
          }
        },
      },
    },
  });
}
