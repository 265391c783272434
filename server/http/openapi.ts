// The OpenAPI 3.0 document of every HTTP route: /v2 generated from the endpoint catalogue and the
// same JSON schemas the routes validate with (translated to 3.0's dialect by openapi-schema.ts),
// the other routes from openapi-routes.ts; served at /v2/openapi.json, with Swagger UI at /docs (served from
// the local package, nothing fetched from the network).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { DOCS_PREFIX } from "./csp.js";
import type { OpenAPIV3 } from "openapi-types";
import { JSON_BODY_BYTES } from "./app.js";
import { UNAUTHENTICATED_BODY_BYTES, type EndpointSpec } from "./endpoint.js";
import type { JsonSchema } from "./validation.js";
import { toOpenApi30 } from "./openapi-schema.js";
import { extraPaths } from "./openapi-routes.js";

type Doc = Record<string, unknown>;

const ref = (name: string): Doc => ({ $ref: `#/components/schemas/${name}` });

const envelopeOf = (data: JsonSchema): JsonSchema => ({
  type: "object",
  properties: {
    data,
    auth_token: { type: "string" },
    verb: { type: "string", enum: ["PUT", "DELETE", "PATCH"] },
  },
});

/** The success envelope (server/http/envelope.ts); `data` is narrowed per operation. */
const success: JsonSchema = {
  type: "object",
  required: ["status", "data", "revision", "request_id", "auth_token", "timestamp"],
  properties: {
    status: { type: "string", enum: ["success"] },
    data: {},
    revision: { type: "string" },
    request_id: { type: "string" },
    auth_token: { type: "string", description: "the request's token; empty when it carried none" },
    timestamp: { type: "string", format: "date-time" },
    page_size: { type: "integer", minimum: 0 },
    start_key: { type: "string" },
    next_start_key: { type: "string" },
  },
};

/** The error envelope (server/http/errors.ts). */
const failure: JsonSchema = {
  type: "object",
  required: ["status", "error", "message", "data", "request_id", "timestamp"],
  properties: {
    status: { type: "string", enum: ["error"] },
    error: { type: "string", pattern: "^[1-5][0-9][0-9]$", description: "the HTTP status as a string" },
    message: { type: "string", description: "the code word: validation error, bad_identifier ..." },
    data: { type: "object", description: "what went wrong, by field and rule for a validation error" },
    request_id: { type: "string" },
    timestamp: { type: "string", format: "date-time" },
  },
};

const successWith = (data: JsonSchema | null): JsonSchema => (data === null ? ref("Success") : { allOf: [ref("Success"), { type: "object", properties: { data } }] });

const LIST_PARAMS = ["page_size", "start_key", "paginate", "ascending", "descending", "created_from", "created_to", "modified_from", "modified_to", "has_key", "key_missing", "has_value", "missing_value", "value_missing"];

/**
 * The document as a read answers it: the stored data (the schema the writes validate with) plus
 * its id. Only for resources whose writes name that schema; other answers stay `data: {}`.
 */
function documentSchema(body: JsonSchema): JsonSchema {
  const properties = typeof body.properties === "object" && body.properties !== null ? body.properties : {};
  const required = Array.isArray(body.required) ? body.required : [];
  return { ...body, properties: { ...properties, id: { type: "string" } }, required: [...new Set([...required, "id"])] };
}

/** The schema a base path's documents follow, from its create or replace operation. */
function documentSchemas(catalogue: readonly EndpointSpec[]): Map<string, JsonSchema> {
  const byPath = new Map<string, JsonSchema>();
  for (const spec of catalogue) {
    const item = /^(.*)\/:id$/.exec(spec.path);
    const base = item?.[1];
    const replace = spec.verbs.POST?.body;
    if (base !== undefined && replace) {
      const create = catalogue.find((s) => s.path === base)?.verbs.PUT?.body;
      // Only a collection whose create takes the same schema is a document resource.
      if (create === replace) byPath.set(base, documentSchema(replace));
    }
  }
  return byPath;
}

const fastifyPath = (path: string): string => path.replace(/:([A-Za-z_]+)/g, "{$1}");

export function buildOpenApi(catalogue: readonly EndpointSpec[], version: string, textingPrefix: string): Doc {
  const paths: Record<string, Doc> = {};
  const documents = documentSchemas(catalogue);
  for (const spec of catalogue) {
    const path = fastifyPath(spec.path);
    const pathParams = [...spec.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const itemOf = /^(.*)\/:id$/.exec(spec.path)?.[1];
    const item: Doc = (paths[path] ??= {});
    for (const [verb, v] of Object.entries(spec.verbs)) {
      if (!v) continue;
      const isList = verb === "GET" && !/\{[a-z_]*id\}$/.test(path);
      const docSchema = itemOf !== undefined ? documents.get(itemOf) : verb === "PUT" ? documents.get(spec.path) : undefined;
      const data = docSchema ? toOpenApi30(docSchema) : null;
      const op: Doc = {
        tags: [spec.tag],
        summary: v.summary,
        operationId: `${verb.toLowerCase()}${path.replace(/\{([a-z_]+)\}/g, "By_$1").replace(/[^A-Za-z0-9]+/g, "_")}`,
        parameters: [
          ...pathParams,
          ...(isList ? LIST_PARAMS.map((name) => ({ name, in: "query", required: false, schema: { type: "string" } })) : []),
          { name: "accept", in: "query", required: false, schema: { type: "string" }, description: "accept tunnelling; csv for CSV" },
          { name: "X-Request-ID", in: "header", required: false, schema: { type: "string" } },
        ],
        responses: {
          ...Object.fromEntries(
            (v.answers ?? [verb === "PUT" ? 201 : 200]).map((status) => [
              String(status),
              v.answersFile
                ? { description: "the file", content: { [v.answersFile.type]: { schema: toOpenApi30(v.answersFile.schema) } } }
                : { description: status === 202 ? "accepted" : "success", content: { "application/json": { schema: successWith(data) }, "text/csv": { schema: { type: "string" } } } },
            ]),
          ),
          "400": { description: "validation error", content: { "application/json": { schema: ref("Failure") } } },
          ...(spec.access === "public" ? {} : { "401": { description: "invalid_credentials", content: { "application/json": { schema: ref("Failure") } } } }),
          ...(spec.access === "account" || v.admin ? { "403": { description: "forbidden", content: { "application/json": { schema: ref("Failure") } } } } : {}),
          "404": { description: "bad_identifier or not_found", content: { "application/json": { schema: ref("Failure") } } },
          "405": { description: "invalid_method: the verb is not served here (Allow lists those that are)", content: { "application/json": { schema: ref("Failure") } } },
          ...(verb === "PUT" || verb === "POST" || verb === "PATCH"
            ? {
                "413": {
                  description: `payload_too_large: a JSON body over ${JSON_BODY_BYTES} bytes, or over ${UNAUTHENTICATED_BODY_BYTES} when no token is outside it`,
                  content: { "application/json": { schema: ref("Failure") } },
                },
                "415": { description: "unsupported_media_type: the body is not JSON", content: { "application/json": { schema: ref("Failure") } } },
              }
            : {}),
        },
      };
      if (spec.access !== "public") op.security = [{ authToken: [] }];
      const raw = Object.fromEntries((v.rawTypes ?? []).map((type) => [type, { schema: { type: "string", format: type.includes("base64") ? "byte" : "binary" } }]));
      if (v.body || v.rawTypes) {
        op.requestBody = { required: true, content: { ...(v.body ? { "application/json": { schema: toOpenApi30(envelopeOf(v.body)) } } : {}), ...raw } };
      }
      item[verb.toLowerCase()] = op;
    }
  }
  for (const [path, extra] of Object.entries(extraPaths(textingPrefix))) paths[path] = translateOperations(extra);
  return {
    openapi: "3.0.3",
    info: {
      title: "Switchboard local telephony API",
      version,
      description:
        "The hosted service's platform API (/v2), served locally. Requests carry X-Auth-Token (or auth_token, or a Bearer token); bodies are the envelope {data: ...}. Get a token with PUT /v2/user_auth. The texting API (tag texting) answers bare JSON and takes its own Bearer credentials. The event websocket and the webhook and relay payloads are in /v2/asyncapi.json.",
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: {
        authToken: { type: "apiKey", in: "header", name: "X-Auth-Token" },
        textingBearer: { type: "http", scheme: "bearer", description: "`<account_uid>:<access_token>` from the user's texting settings" },
      },
      schemas: { Success: toOpenApi30(success), Failure: toOpenApi30(failure) },
    },
    paths,
  };
}

/** The hand-written path items go through the same translation as the catalogue's schemas. */
function translateOperations(pathItem: Doc): Doc {
  const walk = (value: unknown, key: string): unknown => {
    if (key === "schema" && typeof value === "object" && value !== null) return toOpenApi30(value as JsonSchema);
    if (Array.isArray(value)) return value.map((v) => walk(v, ""));
    if (typeof value !== "object" || value === null) return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k)]));
  };
  return walk(pathItem, "") as Doc;
}

/**
 * Serves the documents: the OpenAPI one built here from the catalogue, and the AsyncAPI one the
 * events layer builds (passed in: this layer sits below it), with the texting API's prefix.
 * The OpenAPI document is built at its first request, not at start: few runs ever ask for it.
 */
export async function registerOpenApi(app: FastifyInstance, catalogue: readonly EndpointSpec[], version: string, beside: { textingPrefix: string; asyncApi: Doc }): Promise<void> {
  // The plug-in keeps this object and hands it out as it is: filled in place on first need.
  const document: Doc = {};
  const built = (): Doc => {
    if (!("openapi" in document)) Object.assign(document, buildOpenApi(catalogue, version, beside.textingPrefix));
    return document;
  };
  app.get("/v2/openapi.json", async (_request, reply) => reply.type("application/json; charset=utf-8").send(built()));
  app.get("/v2/asyncapi.json", async (_request, reply) => reply.type("application/json; charset=utf-8").send(beside.asyncApi));
  // Swagger UI and @fastify/swagger load the YAML library at registration (about a tenth of
  // a start's CPU) for a page few requests ever want: they are loaded, and registered on a Fastify
  // app of their own, at the first /docs request; this app hands /docs requests to it.
  let docs: Promise<FastifyInstance> | undefined;
  const docsApp = (): Promise<FastifyInstance> =>
    (docs ??= makeDocsApp(document, built).catch((err: unknown) => {
      docs = undefined;
      throw err;
    }));
  const handDown = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    // A GET's body (if one came) is not handed down, so neither are the headers that describe it.
    const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !HOP_BY_HOP.has(name)));
    const answer = await (await docsApp()).inject({ method: request.method === "HEAD" ? "HEAD" : "GET", url: request.url, headers });
    // What the docs app does not serve is this app's not-found answer, as before.
    if (answer.statusCode === 404) {
      reply.callNotFound();
      return reply;
    }
    reply.code(answer.statusCode);
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) reply.header(name, value);
    }
    return reply.send(answer.rawPayload);
  };
  app.get(DOCS_PREFIX, handDown);
  app.get(`${DOCS_PREFIX}/*`, handDown);
}

/** Headers of one hop (the request's to this app, the docs app's injected answer), not handed across. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "date"]);

async function makeDocsApp(document: Doc, built: () => Doc): Promise<FastifyInstance> {
  const [{ default: Fastify }, { default: fastifySwagger }, { default: fastifySwaggerUi }] = await Promise.all([
    import("fastify"),
    import("@fastify/swagger"),
    import("@fastify/swagger-ui"),
  ]);
  const docs = Fastify({ logger: false });
  await docs.register(fastifySwagger, {
    mode: "static",
    // Built from our own schemas above; the library wants its OpenAPI type.
    specification: { document: document as unknown as OpenAPIV3.Document },
  });
  // Its policy is set with every other answer's, in csp.ts (on this app's reply), stricter than the plug-in's own.
  await docs.register(fastifySwaggerUi, {
    routePrefix: DOCS_PREFIX,
    uiHooks: {
      onRequest: (_request, _reply, next) => {
        built();
        next();
      },
    },
  });
  await docs.ready();
  return docs;
}

export interface RouteSeen {
  method: string;
  url: string;
}

/**
 * Every route registered on the app from now on (plugins included), as Fastify declares it, so
 * a test can hold the OpenAPI document against the routes the server really serves.
 */
export function recordRoutes(app: FastifyInstance): readonly RouteSeen[] {
  const seen: RouteSeen[] = [];
  app.addHook("onRoute", (route) => {
    // An endpoint answers every method on its own path, some through one shared route (endpoint.ts).
    if (route.config?.unlisted === true) return;
    // (Fastify's HEAD beside a GET copies the GET's config: its methods are listed once.)
    const also = route.method === "HEAD" ? [] : (route.config?.alsoAnswers ?? []);
    for (const method of [route.method, also].flat()) seen.push({ method, url: route.url });
  });
  return seen;
}
