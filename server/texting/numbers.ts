// Texting numbers are E.164 as written (`+14155550101`): checked with libphonenumber-js through
// the service's one phone-number helper, and refused when the text is not already that form.
import { DEFAULT_COUNTRY, toE164 } from "../phone-numbers.js";

/** True for a valid number written exactly in E.164 (no spaces, no national form). */
export function isE164(value: unknown): value is string {
  // A leading + makes the country irrelevant: the number carries its own.
  return typeof value === "string" && value.startsWith("+") && toE164(value, DEFAULT_COUNTRY) === value;
}
