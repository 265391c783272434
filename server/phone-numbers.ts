// Caller-id numbers as the service keeps them: E.164 via libphonenumber-js, national numbers read
// in the account's country. Shared by the blocklist API (normalising keys) and the call engine.
// The library (its metadata for every country) costs a fresh process about a tenth of a second
// of CPU to load, and no request a server answers in its first moments needs it: it is loaded on
// first use. (Loading it once the server is idle was measured: it delays a call placed then.)
import { createRequire } from "node:module";
import type { CountryCode } from "libphonenumber-js";

type PhoneNumbers = typeof import("libphonenumber-js");

let library: PhoneNumbers | undefined;

function loadPhoneNumbers(): PhoneNumbers {
  library ??= createRequire(import.meta.url)("libphonenumber-js") as PhoneNumbers;
  return library;
}

export const DEFAULT_COUNTRY: CountryCode = "US";

/** The account document's `country` (ISO alpha-2), or the default when absent or unknown. */
export function accountCountry(account: Record<string, unknown> | undefined): CountryCode {
  const country = typeof account?.country === "string" ? account.country.toUpperCase() : DEFAULT_COUNTRY;
  return loadPhoneNumbers().isSupportedCountry(country) ? country : DEFAULT_COUNTRY;
}

/** The E.164 form of a caller-id number, or null when it is not a valid number. */
export function toE164(number: string, country: CountryCode): string | null {
  const parsed = loadPhoneNumbers().parsePhoneNumberFromString(number, country);
  return parsed?.isValid() ? parsed.number : null;
}
