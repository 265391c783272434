// /v2/accounts/{account_id}/callflows: which numbers and patterns run which tree of callflow
// modules. Checked here so the call engine only meets modules it runs and ids that exist.
import type { FastifyInstance } from "fastify";
import { ApiError } from "../http/errors.js";
import { registerDocResource, view, type Data, type WriteCtx } from "../http/resource.js";
import { isObject } from "../http/request.js";
import type { FieldErrors, JsonSchema } from "../http/validation.js";
import type { StoredDoc, UniqueIndexSpec } from "../store/index.js";
import type { ApiDeps } from "./deps.js";
import { LINK_METHODS } from "../callq-host/modules/callq-recipient.js";
import { PHONE_ACTIONS } from "../callq/recipient-state.js";
import { MediaReferenceError, parseMediaReference, resolveMediaReference } from "../media/reference.js";

/** The modules the call engine runs; a callflow naming any other is refused. */
// `qubicle` and `qubicle_recipient` are the hosted product's original names of the queue modules.
export const CALLFLOW_MODULES = ["device", "user", "play", "callq", "callq_recipient", "qubicle", "qubicle_recipient"] as const;
type CallflowModule = (typeof CALLFLOW_MODULES)[number];

function isCallflowModule(value: unknown): value is CallflowModule {
  return CALLFLOW_MODULES.some((m) => m === value);
}


/**
 * Far deeper than any real menu tree, and shallow enough that code which follows a flow by
 * recursion (merge, clone, the call engine) cannot be driven into a stack overflow.
 */
export const MAX_FLOW_DEPTH = 32;

// `flow` is required, but by `check`, so that its absence is told together with a missing number
// or pattern (Kazoo's schema does not require it; the call engine needs it).
export const callflowSchema: JsonSchema = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    numbers: { type: "array", uniqueItems: true, items: { type: "string", minLength: 1, maxLength: 64, pattern: "^[0-9+*#]*$" } },
    patterns: { type: "array", items: { type: "string", minLength: 1, maxLength: 256 } },
    flow: { type: "object" },
    flags: { type: "array", items: { type: "string", maxLength: 64 } },
    featurecode: {
      type: "object",
      properties: { name: { type: "string", minLength: 1, maxLength: 128 }, number: { type: "string", minLength: 1, maxLength: 64 } },
    },
  },
};

type Referenced = "devices" | "users" | "media" | "callq_queues";

/** What a referenced document is called in messages; also Kazoo's `pvt_type` of such a document. */
const NOUN: Record<Referenced, string> = { devices: "device", users: "user", media: "media", callq_queues: "queue" };

/** An id in the flow that must name a document of the account. */
interface Reference {
  field: string;
  collection: Referenced;
  id: string;
}

class Problems {
  readonly errors: FieldErrors = {};

  add(field: string, rule: string, message: string, value?: unknown): void {
    this.errors[field] = { ...this.errors[field], [rule]: value === undefined ? { message } : { message, value } };
  }

  get any(): boolean {
    return Object.keys(this.errors).length > 0;
  }
}

export function callflowDefaults(data: Data): Data {
  // `metadata` is made on each read; a client writing back what it read must not store it.
  const { metadata: _metadata, ...rest } = data;
  return { numbers: [], patterns: [], ...rest };
}

/**
 * The modules of a flow, each once, in Kazoo's listing order (depth first, a node before its
 * children); a stack rather than recursion, as in `checkFlow`.
 */
function flowModules(flow: unknown): string[] {
  const modules = new Set<string>();
  const stack: unknown[] = [flow];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!isObject(node)) continue;
    const skipped = isObject(node.data) && node.data.skip_module === true;
    if (typeof node.module === "string" && !skipped) modules.add(node.module);
    if (isObject(node.children)) stack.push(...Object.values(node.children).reverse());
  }
  return [...modules];
}

/** Kazoo's crossbar_listing row: `featurecode` is false for a callflow that is none. */
export function callflowRow(doc: StoredDoc): Data {
  const d = doc.data;
  return {
    id: doc.id,
    name: d.name,
    numbers: d.numbers ?? [],
    patterns: d.patterns ?? [],
    featurecode: d.featurecode ?? false,
    modules: flowModules(d.flow),
    flags: d.flags ?? [],
  };
}

/**
 * Walks the module tree breadth-first without recursion, naming each problem by its dotted path
 * (`flow.children._.module`), and returns the ids it must find in the account.
 */
function checkFlow(flow: unknown, problems: Problems): Reference[] {
  const references: Reference[] = [];
  const pending: { node: unknown; path: string; depth: number }[] = [{ node: flow, path: "flow", depth: 1 }];
  for (const { node, path, depth } of pending) {
    if (!isObject(node)) {
      problems.add(path, "type", "Value is not of type object", node);
      continue;
    }
    if (depth > MAX_FLOW_DEPTH) {
      problems.add(path, "maxDepth", `flows are limited to ${MAX_FLOW_DEPTH} nested modules`);
      continue;
    }
    const data = node.data ?? {};
    if (!isObject(data)) problems.add(`${path}.data`, "type", "Value is not of type object", data);
    if (node.module === undefined) {
      problems.add(`${path}.module`, "required", "Field is required but missing");
    } else if (!isCallflowModule(node.module)) {
      problems.add(`${path}.module`, "enum", `Value not found in enumerated list of values: ${CALLFLOW_MODULES.join(", ")}`, node.module);
    } else if (isObject(data)) {
      references.push(...checkModuleData(node.module, data, `${path}.data`, problems));
    }
    const children = node.children ?? {};
    if (!isObject(children)) {
      problems.add(`${path}.children`, "type", "Value is not of type object", children);
      continue;
    }
    for (const [key, child] of Object.entries(children)) pending.push({ node: child, path: `${path}.children.${key}`, depth: depth + 1 });
  }
  return references;
}

/** The cheap checks of one module's data: required keys, enums, and the ids to look up. */
function checkModuleData(module: CallflowModule, data: Data, path: string, problems: Problems): Reference[] {
  const refs: Reference[] = [];
  const stringAt = (key: string): string | undefined => {
    const value = data[key];
    if (value === undefined || typeof value === "string") return value;
    problems.add(`${path}.${key}`, "type", "Value is not of type string", value);
    return undefined;
  };
  const required = (key: string, message: string) => problems.add(`${path}.${key}`, "required", message);
  const reference = (key: string, collection: Referenced) => {
    const id = stringAt(key);
    if (id !== undefined) refs.push({ field: `${path}.${key}`, collection, id });
  };
  // What the players can play (server/media/reference.ts): a media id, checked against the
  // account's media once the flow is read, or a tone/silence stream; anything else is refused here.
  const media = (key: string) => {
    const value = stringAt(key);
    if (value === undefined) return;
    try {
      if (parseMediaReference(value).kind === "media") refs.push({ field: `${path}.${key}`, collection: "media", id: value });
    } catch (err) {
      if (!(err instanceof MediaReferenceError)) throw err;
      problems.add(`${path}.${key}`, err.rule, err.message, value);
    }
  };
  const oneOf = (key: string, values: readonly string[]) => {
    const value = stringAt(key);
    if (value !== undefined && !values.includes(value)) {
      problems.add(`${path}.${key}`, "enum", `Value not found in enumerated list of values: ${values.join(", ")}`, value);
    }
  };

  switch (module) {
    case "device":
    case "user": {
      if (data.id === undefined) required("id", `the ${module} module needs the id of a ${module}`);
      else reference("id", module === "device" ? "devices" : "users");
      break;
    }
    case "callq":
    case "qubicle": {
      // `queue_id` is the documented key; `id` is its alias.
      if (data.queue_id !== undefined) reference("queue_id", "callq_queues");
      else if (data.id !== undefined) reference("id", "callq_queues");
      else required("queue_id", "the callq module needs the id of a queue (queue_id or id)");
      break;
    }
    case "play": {
      if (data.id === undefined && data.uri === undefined) required("id", "the play module needs data.id (a media id) or data.uri");
      media("id");
      media("uri");
      break;
    }
    case "callq_recipient":
    case "qubicle_recipient": {
      if (data.action === undefined) required("action", `the ${module} module needs an action: ${PHONE_ACTIONS.join(", ")}`);
      else oneOf("action", PHONE_ACTIONS);
      oneOf("link_method", LINK_METHODS);
      reference("target_queue", "callq_queues");
      for (const key of ["pin_prompt_media", "success_media", "failure_media"]) media(key);
      break;
    }
  }
  return refs;
}

/**
 * Kazoo's `metadata` of a callflow read: by id, the name and type of each document its flow names
 * (a user's name is first and last name), so a client can show the flow without more requests.
 * Ids that name nothing (deleted since) are left out, as Kazoo does.
 */
async function flowMetadata(deps: ApiDeps, accountId: string, flow: unknown): Promise<Data> {
  const metadata = new Map<string, Data>();
  for (const ref of checkFlow(flow, new Problems())) {
    if (metadata.has(ref.id)) continue;
    const doc = (await deps.collection(accountId, ref.collection)).get(ref.id);
    if (doc === undefined) continue;
    const name = ref.collection === "users" ? `${String(doc.data.first_name ?? "")} ${String(doc.data.last_name ?? "")}` : doc.data.name;
    metadata.set(ref.id, { name, pvt_type: NOUN[ref.collection] });
  }
  return Object.fromEntries(metadata);
}

/** A dialled number runs one callflow: two holding it would make routing a guess. */
export const CALLFLOW_NUMBERS: UniqueIndexSpec = {
  field: "numbers",
  description: "A number may route to only one callflow",
  keys: (data) => (Array.isArray(data.numbers) ? data.numbers.filter((n): n is string => typeof n === "string") : []),
};

export function registerCallflows(app: FastifyInstance, deps: ApiDeps): void {
  deps.store.unique("callflows", CALLFLOW_NUMBERS);
  registerDocResource(app, deps, {
    name: "callflows",
    collection: "callflows",
    schema: callflowSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: callflowDefaults,
    check: async (data: Data, ctx: WriteCtx) => {
      const problems = new Problems();
      const numbers = data.numbers as string[];
      const patterns = data.patterns as string[];
      if (numbers.length === 0 && patterns.length === 0) {
        problems.add("numbers", "required", "Callflows must be assigned at least one number or pattern");
      }
      patterns.forEach((pattern, index) => {
        try {
          new RegExp(pattern);
        } catch (err) {
          problems.add(`patterns.${index}`, "pattern", `Value is not a valid regular expression: ${(err as Error).message}`, pattern);
        }
      });
      // The collection enforces the index on the write itself; these lookups only refuse early.
      const routed = ctx.collection.uniqueIndex(CALLFLOW_NUMBERS);
      const owner = (n: string): string | undefined => {
        const holder = routed.holder(n);
        return holder === ctx.existing?.id ? undefined : holder;
      };
      const clashes = numbers.filter((n) => owner(n) !== undefined);
      if (clashes.length > 0) {
        const which = clashes.map((n) => `${n} (callflow ${owner(n) ?? ""})`).join(", ");
        problems.add("numbers", "unique", `A number may route to only one callflow: already used: ${which}`, clashes[0]);
      }
      const references = data.flow === undefined ? [] : checkFlow(data.flow, problems);
      if (data.flow === undefined) problems.add("flow", "required", "Field is required but missing");
      for (const collection of new Set(references.map((r) => r.collection))) {
        const docs = await deps.collection(ctx.accountId, collection);
        for (const ref of references) {
          if (ref.collection !== collection) continue;
          if (collection === "media") {
            // Named media must also have audio the players can open.
            try {
              resolveMediaReference(ref.id, docs);
            } catch (err) {
              if (!(err instanceof MediaReferenceError)) throw err;
              problems.add(ref.field, err.rule, err.message, ref.id);
            }
          } else if (!docs.has(ref.id)) problems.add(ref.field, "not_found", `no ${NOUN[collection]} with this id`, ref.id);
        }
      }
      if (problems.any) throw new ApiError("validation_error", problems.errors);
    },
    row: callflowRow,
    readAs: async (doc, ctx) => ({ data: { ...view(doc), metadata: await flowMetadata(deps, ctx.params.account_id ?? "", doc.data.flow) }, revision: doc.rev }),
  });
}
