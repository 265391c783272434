// Item 6: a digest answer seen on the wire cannot be used again. Without qop the response hashes
// only the nonce, method and URI, so the same Authorization replayed on a fresh socket would
// register the replayer's contact (or place a call) as the device; with qop a repeated nonce
// count is refused the same way. Each replay gets a new challenge marked stale=true.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorization, digestParams, PhoneCall, SipPhone, type SipMessage } from "../helpers/sip-client.js";
import { REALM, serveSip, type ServedSip } from "./sip-served.js";

let sip: ServedSip;

beforeAll(async () => {
  sip = await serveSip();
}, 30_000);
afterAll(async () => {
  await sip?.stop();
});

/** The phone's first REGISTER answered with a digest computed by hand (`noQop` or with qop nc=1). */
async function registerOnce(p: SipPhone, noQop: boolean): Promise<{ auth: string; res: SipMessage }> {
  const challenge = (await p.send({ expires: 300 })).header("www-authenticate") ?? "";
  const auth = authorization({ ...p.options, method: "REGISTER", uri: p.requestUri, challenge, noQop });
  return { auth, res: await p.send({ expires: 300, authorization: auth }) };
}

describe("a captured digest replayed on a fresh socket", () => {
  it("is refused with a stale challenge when it has no qop, and registers nothing for the replayer", async () => {
    const device = await sip.device();
    const owner = await sip.phone(device);
    const { auth, res } = await registerOnce(owner, true);
    expect(res.status).toBe(200);

    // The replayer keeps the Authorization and brings its own socket and contact.
    const replayer = await sip.phone(device);
    const replay = await replayer.send({ expires: 300, authorization: auth });
    expect(replay.status).toBe(401);
    expect(digestParams(replay.header("www-authenticate") ?? "")).toMatchObject({ stale: "true", realm: REALM });
    // The owner's socket is the only one that ever registered: closing it leaves nothing.
    await owner.socket.close();
    await expect.poll(() => sip.registered()).not.toContain(device.id);
  });

  it("is refused with a stale challenge when it repeats a nonce count under qop", async () => {
    const device = await sip.device();
    const owner = await sip.phone(device);
    const { auth, res } = await registerOnce(owner, false);
    expect(res.status).toBe(200);
    const replay = await (await sip.phone(device)).send({ expires: 300, authorization: auth });
    expect(replay.status).toBe(401);
    expect(digestParams(replay.header("www-authenticate") ?? "").stale).toBe("true");
  });

  it("cannot place a second call with an INVITE's Proxy-Authorization without qop", async () => {
    const device = await sip.device();
    const owner = new PhoneCall(await sip.phone(device), "1003");
    const socket = owner.phone.socket;
    socket.send(owner.inviteText());
    const challenge = await socket.next();
    expect(challenge.status).toBe(407);
    socket.send(owner.ackFailureText(challenge));
    const proxyAuthorization = authorization({
      ...owner.phone.options,
      method: "INVITE",
      uri: owner.uri,
      challenge: challenge.header("proxy-authenticate") ?? "",
      noQop: true,
    });
    socket.send(owner.inviteText({ proxyAuthorization }));
    expect((await socket.next()).status).toBe(100);

    // The same credentials in a new call (its own Call-ID, tag and branch) from another socket.
    const replayer = new PhoneCall(await sip.phone(device), "1003");
    replayer.phone.socket.send(replayer.inviteText({ proxyAuthorization }));
    const replay = await replayer.phone.socket.next();
    expect(replay.status).toBe(407);
    expect(digestParams(replay.header("proxy-authenticate") ?? "").stale).toBe("true");
  });

  it("lets a phone that reuses a one-time nonce answer the stale challenge and refresh", async () => {
    const device = await sip.device();
    const p = await sip.phone(device);
    const { auth, res } = await registerOnce(p, true);
    expect(res.status).toBe(200);
    const stale = await p.send({ expires: 300, authorization: auth });
    expect(stale.status).toBe(401);
    const challenge = stale.header("www-authenticate") ?? "";
    const fresh = authorization({ ...p.options, method: "REGISTER", uri: p.requestUri, challenge, noQop: true });
    expect((await p.send({ expires: 300, authorization: fresh })).status).toBe(200);
    expect(await sip.registered()).toContain(device.id);
  });
});
