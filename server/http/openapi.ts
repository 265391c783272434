// The OpenAPI 3 document of /v2, generated from the endpoint catalogue and the same JSON schemas
// the routes validate with, served at /v2/openapi.json, with Swagger UI at /docs (served from
// the local package, nothing fetched from the network).
import type { FastifyInstance } from "fastify";
import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import type { OpenAPIV3 } from "openapi-types";
import { JSON_BODY_BYTES } from "./app.js";
import { UNAUTHENTICATED_BODY_BYTES, type EndpointSpec } from "./endpoint.js";
import type { JsonSchema } from "./validation.js";

type Doc = Record<string, unknown>;

const envelopeOf = (data: JsonSchema): JsonSchema => ({
  type: "object",
  properties: {
    data,
    auth_token: { type: "string" },
    verb: { type: "string", enum: ["PUT", "DELETE", "PATCH"] },
  },
});

const success: JsonSchema = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["success"] },
    data: {},
    revision: { type: "string" },
    request_id: { type: "string" },
    auth_token: { type: "string" },
    timestamp: { type: "string" },
    page_size: { type: "integer" },
    start_key: { type: "string" },
    next_start_key: { type: "string" },
  },
};

const failure: JsonSchema = {
  type: "object",
  properties: {
    status: { type: "string", enum: ["error"] },
    error: { type: "string", description: "the HTTP status as a string" },
    message: { type: "string", description: "the code word: validation error, bad_identifier ..." },
    data: { type: "object" },
    request_id: { type: "string" },
  },
};

const LIST_PARAMS = ["page_size", "start_key", "paginate", "ascending", "descending", "created_from", "created_to", "modified_from", "modified_to", "has_key", "key_missing", "has_value", "missing_value"];

export function buildOpenApi(catalogue: readonly EndpointSpec[], version: string): Doc {
  const paths: Record<string, Doc> = {};
  for (const spec of catalogue) {
    const path = spec.path.replace(/:([A-Za-z_]+)/g, "{$1}");
    const pathParams = [...spec.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const item: Doc = (paths[path] ??= {});
    for (const [verb, v] of Object.entries(spec.verbs)) {
      if (!v) continue;
      const isList = verb === "GET" && !/\{[a-z_]*id\}$/.test(path);
      const op: Doc = {
        tags: [spec.tag],
        summary: v.summary,
        parameters: [
          ...pathParams,
          ...(isList ? LIST_PARAMS.map((name) => ({ name, in: "query", required: false, schema: { type: "string" } })) : []),
          { name: "accept", in: "query", required: false, schema: { type: "string" }, description: "accept tunnelling; csv for CSV" },
          { name: "X-Request-ID", in: "header", required: false, schema: { type: "string" } },
        ],
        responses: {
          [verb === "PUT" ? "201" : "200"]: { description: "success", content: { "application/json": { schema: success } } },
          "400": { description: "validation error", content: { "application/json": { schema: failure } } },
          ...(spec.access === "public" ? {} : { "401": { description: "invalid_credentials", content: { "application/json": { schema: failure } } } }),
          ...(spec.access === "account" ? { "403": { description: "forbidden", content: { "application/json": { schema: failure } } } } : {}),
          "404": { description: "bad_identifier or not_found", content: { "application/json": { schema: failure } } },
          ...(verb === "PUT" || verb === "POST" || verb === "PATCH"
            ? {
                "413": {
                  description: `payload_too_large: a JSON body over ${JSON_BODY_BYTES} bytes, or over ${UNAUTHENTICATED_BODY_BYTES} when no token is outside it`,
                  content: { "application/json": { schema: failure } },
                },
                "415": { description: "unsupported_media_type: the body is not application/json", content: { "application/json": { schema: failure } } },
              }
            : {}),
        },
      };
      if (spec.access !== "public") op.security = [{ authToken: [] }];
      if (v.body) op.requestBody = { required: true, content: { "application/json": { schema: envelopeOf(v.body) } } };
      item[verb.toLowerCase()] = op;
    }
  }
  return {
    openapi: "3.0.3",
    info: {
      title: "Switchboard local telephony API",
      version,
      description:
        "The hosted service's platform API (/v2), served locally. Requests carry X-Auth-Token (or auth_token, or a Bearer token); bodies are the envelope {data: ...}. Get a token with PUT /v2/user_auth.",
    },
    servers: [{ url: "/" }],
    components: { securitySchemes: { authToken: { type: "apiKey", in: "header", name: "X-Auth-Token" } } },
    paths,
  };
}

export async function registerOpenApi(app: FastifyInstance, catalogue: readonly EndpointSpec[], version: string): Promise<void> {
  const document = buildOpenApi(catalogue, version);
  app.get("/v2/openapi.json", async (_request, reply) => reply.type("application/json; charset=utf-8").send(document));
  await app.register(fastifySwagger, {
    mode: "static",
    // Built from our own schemas above; the library wants its OpenAPI type.
    specification: { document: document as unknown as OpenAPIV3.Document },
  });
  await app.register(fastifySwaggerUi, { routePrefix: "/docs", staticCSP: true });
}
