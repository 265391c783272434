// The CRM link template (local addition, issue 19 item 3) a queue or the account may carry: an
// https URL where `{number}` stands for the caller's number, which the console opens outside the
// app beside a call (e.g. a CRM's search page).
import type { JsonSchema } from "../http/validation.js";

/** https, a host, then anything but spaces and braces, `{number}` the only placeholder. */
export const CRM_LINK_PATTERN = "^https://[A-Za-z0-9.-]+(:[0-9]{1,5})?([/?#][^\\s{}]*(\\{number\\}[^\\s{}]*)*)?$";

export const crmLinkSchema: JsonSchema = {
  type: "string",
  maxLength: 2048,
  pattern: CRM_LINK_PATTERN,
  description: "local addition: an https URL template opened beside a call, {number} replaced by the caller's number (E.164, URL-encoded)",
};

/** The template with the number in it. */
export function crmLinkFor(template: string, number: string): string {
  return template.split("{number}").join(encodeURIComponent(number));
}
