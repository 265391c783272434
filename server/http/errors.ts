// The one catalogue of API errors: each has the hosted service's code word, its HTTP status and,
// for the errors that are not about fields, Kazoo's `data.message` (crossbar puts one in every
// system error: `{"message": "bad identifier", "cause": id}`, `{"message": "invalid credentials"}`). Routes throw ApiError; the error handler turns it into the envelope
// `{status:"error", error:"<status>", message:"<code word>", data, request_id}`.

import { envelopeTimestamp } from "./envelope.js";

export const ERRORS = {
  validation_error: { status: 400, word: "validation error" },
  invalid_data: { status: 400, word: "invalid data" },
  invalid_credentials: { status: 401, word: "invalid_credentials", detail: "invalid credentials" },
  forbidden: { status: 403, word: "forbidden", detail: "forbidden" },
  bad_identifier: { status: 404, word: "bad_identifier", detail: "bad identifier" },
  not_found: { status: 404, word: "not_found", detail: "not found" },
  faulty_request: { status: 404, word: "faulty_request", detail: "faulty request" },
  invalid_method: { status: 405, word: "invalid_method", detail: "invalid method" },
  request_timeout: { status: 408, word: "request_timeout", detail: "request timeout" },
  datastore_conflict: { status: 409, word: "datastore_conflict", detail: "conflicting documents" },
  gone: { status: 410, word: "gone", detail: "gone" },
  payload_too_large: { status: 413, word: "payload_too_large", detail: "payload too large" },
  unsupported_media_type: { status: 415, word: "unsupported_media_type", detail: "unsupported media type" },
  misdirected_request: { status: 421, word: "misdirected_request", detail: "misdirected request" },
  too_many_requests: { status: 429, word: "too_many_requests", detail: "too many requests" },
  header_fields_too_large: { status: 431, word: "header_fields_too_large", detail: "header fields too large" },
  unspecified_fault: { status: 500, word: "unspecified_fault", detail: "unspecified fault" },
  // Crossbar answers 503 when what a request needs is not there to serve it (its datastore faults).
  service_unavailable: { status: 503, word: "service_unavailable", detail: "service unavailable" },
} as const;

export type ErrorCode = keyof typeof ERRORS;

export class ApiError extends Error {
  readonly status: number;
  readonly word: string;

  constructor(
    readonly code: ErrorCode,
    readonly data: Record<string, unknown> = {},
  ) {
    super(ERRORS[code].word);
    this.name = "ApiError";
    this.status = ERRORS[code].status;
    this.word = ERRORS[code].word;
  }
}

export interface ErrorEnvelope {
  status: "error";
  error: string;
  message: string;
  data: Record<string, unknown>;
  request_id: string;
  timestamp: string;
}

/** Kazoo writes its fixed text over these; for the others a message of the route's own stays. */
const FIXED_MESSAGE: ReadonlySet<ErrorCode> = new Set(["bad_identifier", "forbidden", "invalid_method", "datastore_conflict"]);

/** The error's `data` as crossbar shapes it: a 401 says only "invalid credentials", as Kazoo's does. */
function dataOf(err: ApiError): Record<string, unknown> {
  const entry = ERRORS[err.code];
  if (!("detail" in entry)) return err.data;
  if (err.code === "invalid_credentials") return { message: entry.detail };
  if (FIXED_MESSAGE.has(err.code) || typeof err.data.message !== "string") return { ...err.data, message: entry.detail };
  return err.data;
}

export function errorEnvelope(err: ApiError, requestId: string, now: Date): ErrorEnvelope {
  return {
    status: "error",
    error: String(err.status),
    message: err.word,
    data: dataOf(err),
    request_id: requestId,
    timestamp: envelopeTimestamp(now),
  };
}
