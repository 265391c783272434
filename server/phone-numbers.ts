// Caller-id numbers as the service keeps them: E.164 via libphonenumber-js, national numbers read
// in the account's country. Shared by the blocklist API (normalising keys) and the call engine.
import { isSupportedCountry, parsePhoneNumberFromString, type CountryCode } from "libphonenumber-js";

export const DEFAULT_COUNTRY: CountryCode = "US";

/** The account document's `country` (ISO alpha-2), or the default when absent or unknown. */
export function accountCountry(account: Record<string, unknown> | undefined): CountryCode {
  const country = typeof account?.country === "string" ? account.country.toUpperCase() : DEFAULT_COUNTRY;
  return isSupportedCountry(country) ? country : DEFAULT_COUNTRY;
}

/** The E.164 form of a caller-id number, or null when it is not a valid number. */
export function toE164(number: string, country: CountryCode): string | null {
  const parsed = parsePhoneNumberFromString(number, country);
  return parsed?.isValid() ? parsed.number : null;
}
