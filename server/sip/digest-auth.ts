// Who sent a request, proved by digest (RFC 3261 §22): the challenge when there are no fitting
// credentials, and the account's device whose password they match. REGISTER and INVITE share it.
import { challenge, digestMatches, parseAuthorization, type DigestCredentials, type NonceBook } from "./digest.js";
import type { Directory, SipAccount, SipDevice } from "./directory.js";
import type { SipReply } from "./dispatcher.js";
import type { SipRequest } from "./message.js";

/**
 * A registrar challenges as the user's server (401, WWW-Authenticate / Authorization); a server
 * placing calls challenges as a proxy (407, Proxy-Authenticate / Proxy-Authorization, §22.3).
 */
export type DigestRole = "registrar" | "proxy";

const HEADERS: Record<DigestRole, { status: number; challenge: string; credentials: string }> = {
  registrar: { status: 401, challenge: "WWW-Authenticate", credentials: "Authorization" },
  proxy: { status: 407, challenge: "Proxy-Authenticate", credentials: "Proxy-Authorization" },
};

export interface DigestAuthDeps {
  directory: Directory;
  nonces: NonceBook;
}

/** The enabled device of `account` the request's credentials prove, or the reply to send instead. */
export async function authenticateDevice(request: SipRequest, account: SipAccount, role: DigestRole, deps: DigestAuthDeps): Promise<SipDevice | SipReply> {
  const names = HEADERS[role];
  const challengeReply = (stale: boolean): SipReply => ({
    status: names.status,
    headers: [[names.challenge, challenge(account.realm, deps.nonces.issue(), stale)]],
  });

  const headers = request.message.getHeaders(names.credentials.toLowerCase());
  if (headers.length === 0) return challengeReply(false);
  const parsed = headers.map(parseAuthorization);
  if (parsed.some((c) => c === null)) return { status: 400, reason: `Malformed ${names.credentials}` };
  const credentials = parsed.find((c): c is DigestCredentials => c !== null && c.realm.toLowerCase() === account.realm.toLowerCase());
  // Credentials for another realm, or a digest algorithm we do not offer: ask again, ours.
  if (!credentials || (credentials.algorithm !== undefined && credentials.algorithm.toUpperCase() !== "MD5")) return challengeReply(false);

  // The digest-uri is hashed as the client sent it and not compared with the Request-URI:
  // clients behind proxies rewrite one and not the other, and the hash already binds the method.
  const device = await deps.directory.deviceByUsername(account.id, credentials.username);
  // An unknown username and a wrong password answer alike, so usernames cannot be probed.
  if (!device || !digestMatches(credentials, request.method, device.password)) return { status: 403 };
  if (deps.nonces.use(credentials.nonce, credentials.qop === undefined ? undefined : credentials.nc) === "stale") return challengeReply(true);
  if (!device.enabled || !account.enabled) return { status: 403 };
  return device;
}

export function isReply(result: SipDevice | SipReply): result is SipReply {
  return "status" in result;
}
