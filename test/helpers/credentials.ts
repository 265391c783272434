// The demo users' password and the credentials hash PUT /v2/user_auth takes, in a module of their
// own: test/helpers/api.ts re-exports them, but importing api.ts loads the whole server
// (startServer), which a browser file against serve mode has no use for (in serial-browser's one
// process that import cost ~5 s of CPU, bench/README "session 25").
import { createHash } from "node:crypto";

export const DEMO_PASSWORD = "switchboard";

/** md5 of `username:password` (the username lower-cased), as Kazoo's user_auth takes it. */
export function credentials(username: string, password: string): string {
  return createHash("md5").update(`${username.toLowerCase()}:${password}`).digest("hex");
}
