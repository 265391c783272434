// Failures in words for the console, one function per purpose: the message of any error (the
// texting API's errors carry the texting server's own lines), an HTTP API refusal for the admin
// pages and recordings, a refused relay URL, and the words of sign-in, the agent's own requests
// and the supervisor's listen-in. The slices add what was being done.
import { ApiRequestError } from "./client.js";
import type { AgentRequest, RecipientStatusChange, WrapupAction } from "./callq.js";

/** Any error's own message, as it was thrown (the server's words, or the network's). */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

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

/** A relay URL that was not saved, in words: a refusal that names 400 is a URL of the wrong form. */
export function relayUrlErrorText(error: unknown): string {
  const text = errorMessage(error);
  return /400/.test(text) ? "Enter the relay URL as http://host/path or https://host/path." : `Cannot save the relay URL: ${text}`;
}

/** A failed sign-in in words, naming the server asked when the fault may be its address. */
export function signInErrorText(error: unknown, serverUrl: string): string {
  if (!(error instanceof ApiRequestError)) return "Sign-in failed unexpectedly. Try again.";
  if (error.kind === "network") return `Cannot reach the server at ${serverUrl}. Check that it is running and the address is right.`;
  if (error.kind === "malformed") return `The server at ${serverUrl} gave an answer the console does not understand.`;
  switch (error.status) {
    case 400:
      return "The server refused the sign-in request as invalid.";
    case 401:
      return "The account name, username or password is not right.";
    case 403:
      return "This account is not allowed to sign in here.";
    case 404:
    case 405:
      return `The server at ${serverUrl} does not offer sign-in (no /v2/user_auth). Check the server address.`;
    case 429:
      return "Too many sign-in attempts. Wait a minute and try again.";
    default:
      return error.status >= 500
        ? `The server had a problem signing you in (${error.status}${error.code ? ` ${error.code}` : ""}). Try again.`
        : `Sign-in failed (${error.status}${error.code ? ` ${error.code}` : ""}).`;
  }
}

const REQUEST_WORDS: Record<RecipientStatusChange | WrapupAction, string> = {
  login: "log you in",
  logout: "log you out",
  ready: "make you Ready",
  away: "make you Away",
  wrapup_extend: "extend the wrap-up",
  wrapup_cancel: "end the wrap-up",
};

/** A refused request of the agent's (log in, Ready, a queue's availability ...) in words. */
export function requestErrorText(kind: AgentRequest, error: unknown): string {
  const what = kind.startsWith("queue:") ? "change your availability for that queue" : REQUEST_WORDS[kind as RecipientStatusChange | WrapupAction];
  if (error instanceof ApiRequestError) {
    if (error.kind === "network") return `Could not ${what}: the server cannot be reached.`;
    if (error.status === 400) return `Could not ${what}: ${illegalMessage(error.data) ?? "the server refused it in your current state"}.`;
    if (error.status === 403) return `Could not ${what}: you may not change this recipient's state.`;
    if (error.status === 404) return `Could not ${what}: you are not a queue agent (ask an admin to enable you).`;
  }
  return `Could not ${what}: ${errorMessage(error)}`;
}

/**
 * The engine's own words for a refused step: data.action.<why>.message (illegal, or what holds the
 * agent back: disposition_required, wrapup_locked), or a refused field's (an unknown Away reason).
 */
function illegalMessage(data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  for (const field of ["action", "reason"]) {
    const errors = (data as Record<string, unknown>)[field];
    if (typeof errors !== "object" || errors === null) continue;
    for (const rule of Object.values(errors)) {
      const message = typeof rule === "object" && rule !== null ? (rule as Record<string, unknown>)["message"] : undefined;
      if (typeof message === "string") return message;
    }
  }
  return null;
}

/** The server's refusal (data.{field}.{code}) in words for the supervisor. */
export function monitorErrorText(error: unknown): string {
  if (error instanceof ApiRequestError) {
    if (error.kind === "network") return "Could not start listening: the server cannot be reached.";
    if (error.status === 403) return "Only an admin or a user with the call_monitor permission may listen in.";
    const codes = JSON.stringify(error.data ?? "");
    if (codes.includes("no_call")) return "That agent is on no call to listen to.";
    if (codes.includes("no_device")) return "Your phone is not registered, so the server cannot ring it.";
    if (codes.includes("self")) return "You cannot listen to your own calls.";
  }
  return `Could not start listening: ${errorMessage(error)}`;
}
