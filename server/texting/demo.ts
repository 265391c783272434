// Texting numbers for the demo account: each demo user gets one E.164 number made from their
// extension (1001 -> +14155550101). Idempotent: a user who already has texting settings keeps them.
import type { Store } from "../store/index.js";
import { newAccessToken, numbersOf, SETTINGS_COLLECTION } from "./settings.js";

export function demoTextingNumber(extension: string): string {
  return `+141555501${extension.slice(-2).padStart(2, "0")}`;
}

export async function seedTextingNumbers(store: Store, accountId: string, users: readonly { userId: string; extension: string }[]): Promise<void> {
  const settings = await store.account(accountId, SETTINGS_COLLECTION);
  const taken = new Set(settings.all().flatMap((doc) => numbersOf(doc)));
  // Made together: one journal append for the lines queued at once (each still acknowledged).
  const made: Promise<unknown>[] = [];
  for (const { userId, extension } of users) {
    const number = demoTextingNumber(extension);
    if (userId === "" || settings.has(userId) || taken.has(number)) continue;
    made.push(settings.create({ numbers: [number], relay_url: null, pvt_access_token: newAccessToken(store.random) }, { id: userId }));
    taken.add(number);
  }
  await Promise.all(made);
}
