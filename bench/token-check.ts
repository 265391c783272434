// One token check in-process: a token already resolved (AuthService.authenticate's cache hit)
// against resolving it from scratch the way every request did before (pattern, sha256, the token,
// account and user documents), on a real store. Alternating rounds of 200,000 checks each.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { AuthService } from "../server/auth/index.js";
import { Store } from "../server/store/index.js";
import { percentile, report } from "./report.js";

const CHECKS = 200_000;
const ROUNDS = 3;

const dir = await mkdtemp(join(tmpdir(), "sb-bench-token-"));
const store = await Store.open({ dir });
try {
  const accounts = await store.global("accounts");
  const account = await accounts.create({ name: "bench", enabled: true });
  const user = await (await store.account(account.id, "users")).create({ username: "u", priv_level: "admin", enabled: true });
  const auth = await AuthService.open(store, { tokenTtlS: 3600 });
  const token = await auth.tokens.issue({ account_id: account.id, owner_id: user.id, method: "user_auth" });
  // A request brings a new string each time: the cache must not lean on one string's cached hash.
  const fresh = (): string => Buffer.from(token).toString();

  const cached: number[] = [];
  const resolved: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let start = performance.now();
    for (let i = 0; i < CHECKS; i++) await auth.authenticate(fresh());
    cached.push(((performance.now() - start) * 1000) / CHECKS);
    start = performance.now();
    for (let i = 0; i < CHECKS; i++) {
      const verified = await auth.tokens.verify(fresh());
      if (accounts.get(verified?.account_id ?? "")?.data.enabled === false) throw new Error("the account is disabled");
      (await store.account(account.id, "users")).get(verified?.owner_id ?? "");
    }
    resolved.push(((performance.now() - start) * 1000) / CHECKS);
  }
  const median = (values: number[]): number => percentile(values, 50);
  report(`Token check in-process (${ROUNDS} alternating rounds of ${CHECKS.toLocaleString("en")})`, [
    ["resolved once, then kept", `${median(cached).toFixed(2)} µs per check (rounds ${cached.map((v) => v.toFixed(2)).join(", ")})`],
    ["resolved every time", `${median(resolved).toFixed(2)} µs per check (rounds ${resolved.map((v) => v.toFixed(2)).join(", ")})`],
    ["  ratio", `${(median(resolved) / median(cached)).toFixed(1)}x`],
  ]);
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}
