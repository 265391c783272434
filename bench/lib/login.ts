// A login to a server a benchmark measures, in process or spawned: the demo admin by default.
import { credentials, DEMO_PASSWORD } from "../../test/helpers/api.js";

export interface BenchLogin {
  token: string;
  accountId: string;
  ownerId: string;
}

/** A token for `username` of the demo account (or `account`), by md5 credentials. */
export async function benchLogin(url: string, username = "admin", password = DEMO_PASSWORD, account = "demo"): Promise<BenchLogin> {
  const res = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials(username, password), account_name: account } }),
  });
  const body = (await res.json()) as { auth_token?: string; data?: { account_id?: string; owner_id?: string } };
  if (res.status !== 201 || !body.auth_token) throw new Error(`login as ${username} failed: ${res.status}`);
  return { token: body.auth_token, accountId: body.data?.account_id ?? "", ownerId: body.data?.owner_id ?? "" };
}
