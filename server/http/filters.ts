// The query-string filters of the hosted API, AND-combined: filter_KEY, filter_not_KEY,
// has_key, key_missing, has_value, missing_value (or value_missing), created_from/to,
// modified_from/to.
// KEY may be a dotted path into the document.
import type { EqualityIndexSpec } from "../store/index.js";
import { ApiError } from "./errors.js";

export interface Filterable {
  id: string;
  created: number;
  modified: number;
  data: Record<string, unknown>;
}

export type Predicate = (doc: Filterable) => boolean;

/**
 * Secrets that are not pvt_ fields but are shown to some readers only (a device's SIP password):
 * a filter on them would let any reader guess them one request at a time.
 */
const SECRET_KEYS = new Set(["sip.password"]);

/** Parameters that are not filters (paging, tunnels, auth). */
const NOT_FILTERS = new Set(["page_size", "start_key", "paginate", "verb", "accept", "auth_token", "ascending", "descending", "inline"]);

export function filterFromQuery(query: Record<string, string>): Predicate {
  return queryTest(query) ?? (() => true);
}

/**
 * The query's filters as one predicate, or undefined when it has none (every document passes).
 * `answered` names a `filter_KEY` parameter left out: the caller walks only the documents an
 * equality index files under that filter's keys (`equalityFilter`), which are exactly those the
 * filter matches, so testing each again would only read every document's data for nothing. The
 * parameter's value is still checked as the others are (nothing to check for `filter_`).
 */
export function queryTest(query: Record<string, string>, answered?: string): Predicate | undefined {
  const tests: Predicate[] = [];
  for (const param of Object.keys(query)) {
    if (NOT_FILTERS.has(param) || param === answered) continue;
    const value = query[param] ?? "";
    if (param.startsWith("filter_not_")) {
      const get = getter(param.slice("filter_not_".length));
      tests.push((d) => !matches(get(d), value));
    } else if (param.startsWith("filter_")) {
      const get = getter(param.slice("filter_".length));
      tests.push((d) => matches(get(d), value));
    } else if (param === "has_key") {
      const get = getter(value);
      tests.push((d) => get(d) !== undefined);
    } else if (param === "key_missing") {
      const get = getter(value);
      tests.push((d) => get(d) === undefined);
    } else if (param === "has_value") {
      const get = getter(value);
      tests.push((d) => !isEmpty(get(d)));
    } else if (param === "missing_value" || param === "value_missing") {
      // filters.md writes missing_value; crossbar_filter reads value_missing: both are taken.
      const get = getter(value);
      tests.push((d) => isEmpty(get(d)));
    } else if (param === "created_from" || param === "created_to" || param === "modified_from" || param === "modified_to") {
      const bound = Number(value);
      if (!/^\d+$/.test(value)) {
        throw new ApiError("validation_error", { [param]: { type: { message: "Value is not of type integer", value } } });
      }
      const field = param.startsWith("created") ? "created" : "modified";
      const from = param.endsWith("_from");
      tests.push((d) => (from ? d[field] >= bound : d[field] <= bound));
    }
  }
  for (const range of RANGES) checkRange(query, range);
  if (tests.length === 0) return undefined;
  const [only] = tests;
  if (tests.length === 1 && only !== undefined) return only;
  return (doc) => {
    for (const t of tests) if (!t(doc)) return false;
    return true;
  };
}

/** A `filter_KEY=value` of the query, the kind an equality index can answer. */
export interface EqualityFilter {
  field: string;
  /** The query parameter it came from (`filter_<field>`); absent for one a caller made. */
  param?: string;
  /** The index keys of the documents the filter matches (see `matchKeys`). */
  keys: string[];
}

/** The query's `filter_KEY` filters (not `filter_not_KEY`), with the index keys each matches. */
export function equalityFilters(query: Record<string, string>): EqualityFilter[] {
  const out: EqualityFilter[] = [];
  for (const param of Object.keys(query)) {
    if (!param.startsWith("filter_") || param.startsWith("filter_not_")) continue;
    const field = param.slice("filter_".length);
    out.push({ field, param, keys: equalityFilter(field, query[param] ?? "").keys });
  }
  return out;
}

/** What `filter_<field>=<value>` asks of an equality index. */
export function equalityFilter(field: string, value: string): EqualityFilter {
  const anyOf = jsonList(value) ?? [value];
  return { field, keys: anyOf.flatMap(wantedKeys) };
}

/**
 * An equality index on `field` for list filters: it files each document under the keys of the
 * values `filter_<field>` finds in it, so a filter's documents are those under its `keys`.
 */
export function equalityIndexOn(field: string): EqualityIndexSpec {
  const get = getter(field);
  return { field, keys: (doc) => matchKeys(get(doc)) };
}

/**
 * The keys under which a document value is found, one per way `matchesOne` can match it: a
 * string by itself, a boolean by its text, null by "null", a number by its value (any text
 * that reads as that number matches it), an array by each of its elements; an object never.
 */
function matchKeys(actual: unknown): string[] {
  if (Array.isArray(actual)) return actual.flatMap(matchKeys);
  if (typeof actual === "string") return [`s:${actual}`];
  if (typeof actual === "boolean") return [`b:${String(actual)}`];
  // String() writes -0 as "0", as `===` counts them equal; NaN equals nothing.
  if (typeof actual === "number") return Number.isNaN(actual) ? [] : [`#${String(actual)}`];
  return actual === null ? ["n"] : [];
}

/** The keys of the document values one wanted text matches (see `matchesOne`). */
function wantedKeys(wanted: string): string[] {
  const keys = [`s:${wanted}`];
  if (wanted === "true" || wanted === "false") keys.push(`b:${wanted}`);
  if (wanted === "null") keys.push("n");
  const n = Number(wanted);
  if (wanted.trim() !== "" && !Number.isNaN(n)) keys.push(`#${String(n)}`);
  return keys;
}

/** The ranges a query may bound, with their parameters' names. */
const RANGES = [
  { name: "created", from: "created_from", to: "created_to" },
  { name: "modified", from: "modified_from", to: "modified_to" },
] as const;

/** An end before the start matches nothing: crossbar says so (400 `{KEY}_from.date_range`) rather than answer an empty list. */
function checkRange(query: Record<string, string>, range: (typeof RANGES)[number]): void {
  const from = query[range.from];
  const to = query[range.to];
  if (from === undefined || to === undefined || Number(to) >= Number(from)) return;
  throw new ApiError("validation_error", {
    [range.from]: { date_range: { message: `${range.to} ${to} is prior to ${range.from} ${from}`, cause: Number(from) } },
  });
}

const hasOwn = Object.prototype.hasOwnProperty;

/** A reader of one dotted key, split once per request rather than once per document. */
function getter(key: string): (doc: Filterable) => unknown {
  if (key === "id") return (doc) => doc.id;
  // Private fields (credential hashes, API keys) are never filterable: no probing them.
  if (key.startsWith("pvt_") || SECRET_KEYS.has(key)) return () => undefined;
  const parts = key.split(".");
  if (parts.length === 1) return (doc) => (hasOwn.call(doc.data, key) ? doc.data[key] : undefined);
  return (doc) => {
    let value: unknown = doc.data;
    for (const part of parts) {
      if (typeof value !== "object" || value === null || !hasOwn.call(value, part)) return undefined;
      value = (value as Record<string, unknown>)[part];
    }
    return value;
  };
}

/**
 * A query value is a string; compare it to a document value of any scalar type. A JSON array of
 * values (`filter_name=["a","b"]`) matches any of them, as crossbar_filter reads one.
 */
function matches(actual: unknown, wanted: string): boolean {
  const anyOf = jsonList(wanted);
  return anyOf === null ? matchesOne(actual, wanted) : anyOf.some((one) => matchesOne(actual, one));
}

function jsonList(wanted: string): string[] | null {
  if (!wanted.startsWith("[")) return null;
  try {
    const parsed: unknown = JSON.parse(wanted);
    if (!Array.isArray(parsed)) return null;
    return parsed.filter((v) => v === null || ["string", "number", "boolean"].includes(typeof v)).map((v) => String(v));
  } catch {
    return null;
  }
}

function matchesOne(actual: unknown, wanted: string): boolean {
  if (actual === undefined) return false;
  if (Array.isArray(actual)) return actual.some((a) => matchesOne(a, wanted));
  if (typeof actual === "boolean") return String(actual) === wanted;
  if (typeof actual === "number") return wanted.trim() !== "" && Number(wanted) === actual;
  if (typeof actual === "string") return actual === wanted;
  return actual === null && wanted === "null";
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null || value === "") return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.keys(value).length === 0;
  return false;
}
