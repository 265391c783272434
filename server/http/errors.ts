// The one catalogue of API errors: each has the hosted service's code word, its HTTP status and
// a default message. Routes throw ApiError; the error handler turns it into the envelope
// `{status:"error", error:"<status>", message:"<code word>", data, request_id}`.

export const ERRORS = {
  validation_error: { status: 400, word: "validation error" },
  invalid_data: { status: 400, word: "invalid data" },
  invalid_credentials: { status: 401, word: "invalid_credentials" },
  forbidden: { status: 403, word: "forbidden" },
  bad_identifier: { status: 404, word: "bad_identifier" },
  not_found: { status: 404, word: "not_found" },
  faulty_request: { status: 404, word: "faulty_request" },
  invalid_method: { status: 405, word: "invalid_method" },
  request_timeout: { status: 408, word: "request_timeout" },
  datastore_conflict: { status: 409, word: "datastore_conflict" },
  gone: { status: 410, word: "gone" },
  payload_too_large: { status: 413, word: "payload_too_large" },
  unsupported_media_type: { status: 415, word: "unsupported_media_type" },
  misdirected_request: { status: 421, word: "misdirected_request" },
  too_many_requests: { status: 429, word: "too_many_requests" },
  header_fields_too_large: { status: 431, word: "header_fields_too_large" },
  unspecified_fault: { status: 500, word: "unspecified_fault" },
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

export function errorEnvelope(err: ApiError, requestId: string, now: Date): ErrorEnvelope {
  return {
    status: "error",
    error: String(err.status),
    message: err.word,
    data: err.data,
    request_id: requestId,
    timestamp: now.toISOString(),
  };
}
