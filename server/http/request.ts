// What a request asks for once the tunnels are undone: the effective verb (`verb` in the query
// or envelope), the effective Accept (`accept` in the query or envelope), the envelope's data,
// and flat string query parameters.
import { Readable } from "node:stream";
import type { FastifyRequest } from "fastify";
import { ApiError } from "./errors.js";

export type Verb = "GET" | "PUT" | "POST" | "PATCH" | "DELETE";
export const VERBS: readonly Verb[] = ["GET", "PUT", "POST", "PATCH", "DELETE"];

/**
 * JSON is `application/json` or a structured `application/<x>+json`, with parameters after `;`
 * only: `application/jsonx` is not JSON.
 */
export const JSON_MEDIA_TYPE = /^application\/(?:[a-z0-9!#$&^_.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Types whose body Kazoo's crossbar also reads as JSON: `application/x-json`, and curl's default
 * `application/x-www-form-urlencoded` when the body is JSON text (a real form is refused).
 */
export const ALSO_JSON_MEDIA_TYPE = /^application\/(?:x-json|x-www-form-urlencoded)\s*(?:;|$)/i;

/** Is a body of this Content-Type read as the JSON envelope? */
export function isJsonType(type: string | undefined): boolean {
  if (type === undefined) return false;
  const t = type.trim();
  return JSON_MEDIA_TYPE.test(t) || ALSO_JSON_MEDIA_TYPE.test(t);
}

/**
 * What came as the body: none, a JSON envelope, or anything else a parser let through (an upload
 * stream, plain text), which only an endpoint that reads raw bodies takes.
 */
export type BodyKind = "none" | "json" | "raw";

export interface ParsedRequest {
  verb: Verb;
  bodyKind: BodyKind;
  query: Record<string, string>;
  /** The envelope's `data`; undefined when the body had none. */
  data: unknown;
  /** The whole JSON body when it was an object (envelope keys included). */
  envelope: Record<string, unknown>;
  /** `auth_token` from the query string or the envelope. */
  bodyToken: string | null;
  /** The Accept wanted, lower-case: `accept=` wins over the header. */
  accept: string;
}

export function parseRequest(request: FastifyRequest): ParsedRequest {
  const query = flatQuery(request.query);
  const bodyKind = bodyKindOf(request);
  // Only a parsed JSON object is an envelope; a raw upload stream is not.
  const envelope = bodyKind === "json" && isPlainObject(request.body) ? request.body : {};
  const method = request.method.toUpperCase();
  let verb: Verb = VERBS.find((v) => v === method) ?? "GET";
  const tunnelled = stringOf(envelope.verb) ?? query.verb;
  if (method === "POST" && tunnelled !== undefined) {
    const wanted = tunnelled.toUpperCase();
    const v = VERBS.find((x) => x === wanted);
    if (!v) throw new ApiError("invalid_method", { verb: tunnelled });
    verb = v;
  }
  const accept = (stringOf(envelope.accept) ?? query.accept ?? request.headers.accept ?? "application/json").toLowerCase();
  return {
    verb,
    bodyKind,
    query,
    data: envelope.data,
    envelope,
    bodyToken: query.auth_token ?? stringOf(envelope.auth_token) ?? null,
    accept,
  };
}

/** The envelope of a request without a body: shared, never written. */
const NO_ENVELOPE: Record<string, unknown> = Object.freeze({});

/**
 * parseRequest for a GET or HEAD, whose body Fastify never reads: the verb is GET (nothing
 * tunnels), no envelope, the query's `accept` over the header's.
 */
export function parseBodyless(request: FastifyRequest): ParsedRequest {
  const query = flatQuery(request.query);
  const accept = query.accept ?? request.headers.accept;
  return {
    verb: "GET",
    bodyKind: "none",
    query,
    data: undefined,
    envelope: NO_ENVELOPE,
    bodyToken: query.auth_token ?? null,
    accept: accept === undefined ? "application/json" : accept.toLowerCase(),
  };
}

/** A JSON body must be the request envelope, an object: `null`, `"str"`, `123` or `[]` are 400. */
function bodyKindOf(request: FastifyRequest): BodyKind {
  const body: unknown = request.body;
  if (body === undefined) return "none";
  if (body instanceof Readable) return "raw";
  const type = request.headers["content-type"];
  if (!isJsonType(type)) return "raw";
  if (!isPlainObject(body)) {
    throw new ApiError("validation_error", { json: { type: { message: "the body must be a JSON object: the request envelope", target: "object" } } });
  }
  return "json";
}

/** Does the client want CSV (`accept=csv`, `text/csv`)? */
export function wantsCsv(accept: string): boolean {
  if (!accept.includes("csv")) return false;
  return accept === "csv" || accept.split(",").some((part) => part.trim().startsWith("text/csv"));
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!isObject(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/** Query parameters as single strings: a repeated parameter keeps its last value. */
function flatQuery(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!isObject(query)) return out;
  // Own keys only, without Object.entries' pairs (the query has no prototype's keys to skip).
  for (const k of Object.keys(query)) {
    const v = query[k];
    if (typeof v === "string") out[k] = v;
    else if (Array.isArray(v) && v.length > 0) out[k] = String(v[v.length - 1]);
  }
  return out;
}
