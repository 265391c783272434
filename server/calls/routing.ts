// Which callflow a dialled number runs: an exact entry of a callflow's `numbers` first, then the
// first callflow whose `patterns` (regular expressions) match, as the hosted service looks up.
import type { Store, StoredDoc } from "../store/index.js";

export function callflowFor(callflows: readonly StoredDoc[], dialled: string): StoredDoc | undefined {
  const exact = callflows.find((c) => Array.isArray(c.data.numbers) && c.data.numbers.includes(dialled));
  if (exact) return exact;
  return callflows.find((c) => Array.isArray(c.data.patterns) && c.data.patterns.some((p) => typeof p === "string" && matches(p, dialled)));
}

export async function findCallflow(store: Store, accountId: string, dialled: string): Promise<StoredDoc | undefined> {
  return callflowFor((await store.account(accountId, "callflows")).all(), dialled);
}

function matches(pattern: string, dialled: string): boolean {
  try {
    return new RegExp(pattern).test(dialled);
  } catch {
    // The API refuses bad patterns; one in a hand-edited file matches nothing.
    return false;
  }
}
