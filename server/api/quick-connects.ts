// /v2/accounts/{account_id}/quick_connects (local addition): the account's short list of whom
// agents call or transfer to in one click (a user, a queue or an outside number), chosen by
// admins and read by everyone signed in to the account.
import type { FastifyInstance } from "fastify";
import { registerDocResource, type Data } from "../http/resource.js";
import { fieldError, type JsonSchema } from "../http/validation.js";
import { ID_PATTERN, type StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const QUICK_CONNECT_TYPES = ["user", "queue", "external"] as const;

export const quickConnectSchema: JsonSchema = {
  type: "object",
  required: ["name", "type"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    type: { type: "string", enum: [...QUICK_CONNECT_TYPES] },
    /** A user's or a queue's id (types user and queue). */
    target_id: { type: "string", pattern: ID_PATTERN.source },
    /** What is dialled for an external quick connect: digits, an optional leading +. */
    number: { type: "string", pattern: "^\\+?[0-9]{2,20}$" },
  },
};

/** The collection that holds the target of each type that names a document. */
const TARGET_COLLECTION: Record<string, string> = { user: "users", queue: "callq_queues" };

function quickConnectRow(doc: StoredDoc): Data {
  const { name, type, target_id, number } = doc.data;
  return { id: doc.id, name, type, target_id, number };
}

export function registerQuickConnects(app: FastifyInstance, deps: ApiDeps): void {
  registerDocResource(app, deps, {
    name: "quick_connects",
    collection: "quick_connects",
    schema: quickConnectSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    check: async (data, ctx) => {
      const type = String(data.type);
      if (type === "external") {
        if (data.number === undefined) throw fieldError("number", "required", "an external quick connect needs the number to dial");
        if (data.target_id !== undefined) throw fieldError("target_id", "forbidden", "an external quick connect dials a number, not a document");
        return;
      }
      const target = data.target_id;
      if (typeof target !== "string") throw fieldError("target_id", "required", `a ${type} quick connect needs the ${type}'s id`);
      if (data.number !== undefined) throw fieldError("number", "forbidden", `a ${type} quick connect calls its ${type}, not a number`);
      const collection = TARGET_COLLECTION[type] ?? "";
      if (!(await deps.collection(ctx.accountId, collection)).has(target)) throw fieldError("target_id", "not_found", `no such ${type} in this account`, target);
    },
    row: quickConnectRow,
    sortKey: (doc) => `${String(doc.data.name ?? "").toLowerCase()}\u0000${doc.id}`,
    summaries: {
      list: "Local addition: the account's quick connects (users, queues, outside numbers) for dial and transfer",
      create: "Local addition: add a quick connect (admins)",
      read: "Local addition: one quick connect",
      update: "Local addition: replace a quick connect (admins)",
      patch: "Local addition: change a quick connect (admins)",
      delete: "Local addition: remove a quick connect (admins)",
    },
  });
}
