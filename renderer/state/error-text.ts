// A failure in words for the console, one function per purpose; the slices add what was being done.
import { ApiRequestError } from "../api/client.js";

/** An API failure in words for the admin or agent, ending with a full stop. */
export function apiErrorText(error: unknown): string {
  if (!(error instanceof ApiRequestError)) return "something went wrong in the console.";
  if (error.kind === "network") return "the server cannot be reached.";
  if (error.kind === "malformed") return "the server gave an answer the console does not understand.";
  switch (error.status) {
    case 401:
      return "your session has ended; sign in again.";
    case 403:
      return "only an admin may do this.";
    case 404:
      return "it no longer exists (someone may have deleted it).";
    case 409:
      return "someone changed it at the same time; reload and try again.";
    case 400: {
      const detail = validationDetail(error.data);
      return detail === null ? "the server refused it as invalid." : `the server refused it: ${detail}.`;
    }
    default:
      return `the server answered ${error.status}${error.code ? ` (${error.code})` : ""}.`;
  }
}

/** The first field problem of a validation error envelope, e.g. "uri: Value is not a valid URI". */
function validationDetail(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  for (const [field, rules] of Object.entries(data)) {
    if (typeof rules !== "object" || rules === null) continue;
    for (const rule of Object.values(rules)) {
      const message: unknown = typeof rule === "object" && rule !== null ? Reflect.get(rule, "message") : undefined;
      if (typeof message === "string") return `${field}: ${message}`;
    }
  }
  return null;
}
