// Texting contacts (collection `texting_contacts`): each belongs to one user, who texts it from
// their numbers; its id is the ConversationID of that user's thread with it. Input checks give
// one texting error message per problem; opt-out is kept on the contact, set by its own texts.
import type { StoredDoc } from "../store/index.js";
import { invalidParameter, invalidPhoneNumber, missingParameter, Problems } from "./errors.js";
import { isE164 } from "./numbers.js";

export const CONTACTS_COLLECTION = "texting_contacts";

export const MAX_NAME_LENGTH = 128;
export const MAX_EMAIL_LENGTH = 254;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Keywords a contact texts to stop messages, and to start them again (carrier practice, whole message). */
export const OPT_OUT_KEYWORDS = ["STOP", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"] as const;
export const OPT_IN_KEYWORDS = ["START"] as const;

export interface ContactInput {
  phoneNumber: string;
  fullName: string;
  email?: string;
}

/** What a contact's own text says about its consent: opt out, opt in, or nothing. */
export function consentKeyword(body: string): { kind: "out" | "in"; keyword: string } | null {
  const word = body.trim().toUpperCase();
  if ((OPT_OUT_KEYWORDS as readonly string[]).includes(word)) return { kind: "out", keyword: word };
  if ((OPT_IN_KEYWORDS as readonly string[]).includes(word)) return { kind: "in", keyword: word };
  return null;
}

/** The body of a contact create or update, checked; `fullName` defaults to the number. */
export function contactInput(body: unknown): ContactInput {
  const problems = new Problems();
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    problems.add(missingParameter("phoneNumber"));
    problems.check();
  }
  const { phoneNumber, fullName, email } = body as Record<string, unknown>;
  if (phoneNumber === undefined || phoneNumber === null || phoneNumber === "") problems.add(missingParameter("phoneNumber"));
  else if (!isE164(phoneNumber)) problems.add(invalidPhoneNumber(phoneNumber));
  if (fullName !== undefined && fullName !== null) {
    if (typeof fullName !== "string") problems.add(invalidParameter("fullName", "must be a string"));
    else if (fullName.length > MAX_NAME_LENGTH) problems.add(invalidParameter("fullName", `longer than ${MAX_NAME_LENGTH} characters`));
  }
  if (email !== undefined && email !== null && email !== "") {
    if (typeof email !== "string" || email.length > MAX_EMAIL_LENGTH || !EMAIL.test(email)) {
      problems.add(invalidParameter("email", `'${String(email)}' is not an e-mail address`));
    }
  }
  problems.check();
  const number = phoneNumber as string;
  const name = typeof fullName === "string" && fullName.trim() !== "" ? fullName.trim() : number;
  return { phoneNumber: number, fullName: name, ...(typeof email === "string" && email !== "" ? { email } : {}) };
}

export function isOptedOut(doc: StoredDoc): boolean {
  return doc.data.optedOut === true;
}

export function contactName(doc: StoredDoc): string {
  return typeof doc.data.fullName === "string" ? doc.data.fullName : String(doc.data.phoneNumber ?? "");
}

export function contactEmail(doc: StoredDoc): string {
  return typeof doc.data.email === "string" ? doc.data.email : "";
}

/** The Texting contact as the API shows it, with its consent state. */
export function contactView(doc: StoredDoc): Record<string, unknown> {
  const d = doc.data;
  return {
    id: doc.id,
    phoneNumber: d.phoneNumber,
    fullName: contactName(doc),
    ...(typeof d.email === "string" ? { email: d.email } : {}),
    optedOut: d.optedOut === true,
    ...(d.optedOut === true ? { optOutKeyword: d.optOutKeyword, optedOutAt: d.optedOutAt } : {}),
  };
}
