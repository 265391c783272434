// The response envelope of the hosted API: `{status:"success", data, revision, request_id,
// auth_token, timestamp}` plus the paging keys on lists.
import { hash } from "node:crypto";

export interface Paging {
  page_size: number;
  start_key?: string;
  next_start_key?: string;
}

export interface SuccessEnvelope {
  status: "success";
  data: unknown;
  revision: string;
  request_id: string;
  auth_token: string;
  timestamp: string;
  page_size?: number;
  start_key?: string;
  next_start_key?: string;
}

/** What a success envelope is made of: the answer's data and the request's facts. */
export interface EnvelopeOptions<D> {
  data: D;
  revision?: string;
  requestId: string;
  authToken: string | null;
  now: Date;
  paging?: Paging;
}

export function successEnvelope(options: EnvelopeOptions<unknown>): SuccessEnvelope {
  return {
    status: "success",
    data: options.data,
    revision: options.revision ?? contentRevision(options.data),
    request_id: options.requestId,
    auth_token: options.authToken ?? "",
    timestamp: envelopeTimestamp(options.now),
    ...options.paging,
  };
}

/** A stable revision for a response that is not one document: the md5 of its content. */
export function contentRevision(data: unknown): string {
  return hash("md5", data instanceof JsonText ? data.text : JSON.stringify(data ?? null), "hex");
}

/**
 * An answer's data already serialized (a document's text made once per stored revision): the
 * envelope is joined around `text` instead of serializing the data again. `value()` gives the
 * data itself for the answers that need it (CSV, pretty print); `text` is always
 * `JSON.stringify(value())`.
 */
export class JsonText {
  constructor(
    readonly text: string,
    readonly value: () => unknown,
  ) {}
}

/** The data as an envelope carries it: a JsonText's value, anything else itself. */
export function plainData(data: unknown): unknown {
  return data instanceof JsonText ? data.value() : data;
}

/**
 * `JSON.stringify(successEnvelope(options))` for data serialized already, byte for byte: the same
 * keys in the same order, the paging keys last as the spread puts them.
 */
export function successEnvelopeText(options: EnvelopeOptions<JsonText>): string {
  const revision = options.revision ?? contentRevision(options.data);
  const paging = options.paging === undefined ? "{}" : JSON.stringify(options.paging);
  // The paging object's text without its braces is what the spread adds to the envelope's end.
  const end = paging === "{}" ? "}" : `,${paging.slice(1)}`;
  return (
    `{"status":"success","data":${options.data.text},"revision":${jsonString(revision)},"request_id":${jsonString(options.requestId)}` +
    `,"auth_token":${tokenText(options.authToken ?? "")},"timestamp":"${envelopeTimestamp(options.now)}"${end}`
  );
}

/** Strings JSON writes as they are between quotes: no quote, backslash, control or non-ASCII character. */
const PLAIN_JSON_STRING = /^[\w.:~+/=-]*$/;

/** `JSON.stringify(s)` for a string: revisions and request ids are plain and need no escaping. */
function jsonString(s: string): string {
  return s.length <= 128 && PLAIN_JSON_STRING.test(s) ? `"${s}"` : JSON.stringify(s);
}

/** The last auth token's text: a caller's requests carry the same token one after another. */
let lastToken = "";
let lastTokenText = '""';

function tokenText(token: string): string {
  if (token !== lastToken) {
    lastTokenText = jsonString(token);
    lastToken = token;
  }
  return lastTokenText;
}

/** The last timestamp's text: requests in the same second share it (toISOString is not cheap). */
let lastIsoSecond = Number.NaN;
let lastIsoText = "";

/**
 * An envelope's `timestamp`: UTC to the second with a `Z`, as Kazoo writes it
 * (`kz_time:iso8601(kz_time:now_s())`: "2017-05-01T20:31:35Z"), not JavaScript's milliseconds.
 */
export function envelopeTimestamp(now: Date): string {
  const second = Math.floor(now.getTime() / 1000);
  if (second !== lastIsoSecond) {
    lastIsoText = `${new Date(second * 1000).toISOString().slice(0, 19)}Z`;
    lastIsoSecond = second;
  }
  return lastIsoText;
}
