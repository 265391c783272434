// Item 13: a device binds at most 10 contacts (one REGISTER past that gets 403 Too Many Registered
// Contacts and changes nothing), and a call to it sends one INVITE per socket, never a flood.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contactExpiries, hex, PhoneCall, SipPhone, type SipSocket, type TestDevice } from "../helpers/sip-client.js";
import { REALM, serveSip, type ServedSip } from "./sip-served.js";

const CAP = 10;
let sip: ServedSip;

beforeAll(async () => {
  sip = await serveSip();
}, 30_000);
afterAll(async () => {
  await sip?.stop();
});

const newContact = () => `sip:${hex(4)}@${hex(4)}.invalid;transport=ws`;

/** A phone of `device` on `socket` with a contact of its own. */
function phoneOn(socket: SipSocket, device: TestDevice, contact = newContact()): SipPhone {
  return new SipPhone(socket, { username: device.username, password: device.password, realm: REALM, contact });
}

describe("contacts per device", () => {
  it(`binds ${CAP} contacts, refuses the next with 403 and a reason, and still refreshes and swaps the ones it has`, async () => {
    const device = await sip.device();
    const socket = await sip.socket();
    const phones: SipPhone[] = [];
    for (let i = 0; i < CAP; i++) {
      const p = phoneOn(socket, device);
      phones.push(p);
      expect((await p.register({ expires: 300 })).status, `contact ${i + 1}`).toBe(200);
    }
    const extra = phoneOn(socket, device);
    const refused = await extra.register({ expires: 300 });
    expect(refused.status).toBe(403);
    expect(refused.startLine).toBe("SIP/2.0 403 Too Many Registered Contacts");
    expect(refused.header("warning")).toContain(`at most ${CAP} contacts`);

    const first = phones[0];
    if (!first) throw new Error("no phone");
    const refreshed = await first.register({ expires: 600 });
    expect(refreshed.status).toBe(200);
    const listed = contactExpiries(refreshed);
    expect(listed.size).toBe(CAP);
    expect(listed.has(extra.contact)).toBe(false);

    // One goes, and the refused contact now fits.
    expect((await first.unregister()).status).toBe(200);
    expect((await extra.register({ expires: 300 })).status).toBe(200);
  });

  it("refuses a single REGISTER carrying more contacts than the cap, binding none of them", async () => {
    const device = await sip.device();
    const p = phoneOn(await sip.socket(), device);
    const extra = Array.from({ length: CAP }, () => `Contact: <${newContact()}>`);
    const res = await p.register({ expires: 300, extraHeaders: extra });
    expect(res.status).toBe(403);
    expect(await sip.registered()).not.toContain(device.id);
  });
});

describe("a call to a device with many contacts", () => {
  it("sends one INVITE per socket the device registered on, whatever the contacts on it", async () => {
    const target = await sip.device();
    const crowded = await sip.socket();
    for (let i = 0; i < CAP - 1; i++) expect((await phoneOn(crowded, target).register({ expires: 300 })).status).toBe(200);
    const single = await sip.socket();
    expect((await phoneOn(single, target).register({ expires: 300 })).status).toBe(200);

    const number = String(7100 + Math.floor(Math.random() * 800));
    await sip.api("PUT", `/v2/accounts/${sip.admin.accountId}/callflows`, { numbers: [number], flow: { module: "device", data: { id: target.id }, children: {} } });
    const caller = await sip.device();
    const call = new PhoneCall(await sip.phone(caller), number);
    expect((await call.place()).status).toBe(100);

    for (const socket of [crowded, single]) {
      const invite = await socket.next(5000);
      expect(invite.method).toBe("INVITE");
      await socket.expectSilence(500);
    }
  });
});
