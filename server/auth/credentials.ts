// Kazoo's credential rule: md5 (or sha1) of `lowercase(username):password`. Passwords are never
// kept in clear: a user document keeps only these two hashes.
import { createHash } from "node:crypto";

export interface CredentialHashes {
  pvt_md5_auth: string;
  pvt_sha1_auth: string;
}

export function credentialHashes(username: string, password: string): CredentialHashes {
  const text = `${username.toLowerCase()}:${password}`;
  return {
    pvt_md5_auth: createHash("md5").update(text).digest("hex"),
    pvt_sha1_auth: createHash("sha1").update(text).digest("hex"),
  };
}
