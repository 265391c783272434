// Texting API conformance against a real server: Bearer auth, send and every one of its
// failures, contacts create/update/read/list and theirs, the console's extensions (thread, read,
// image upload) and the platform endpoints (per-user texting settings, simulated inbound texts).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";
import { TINY_PNG, texting, textingUser, type TextingSettings, type TextingUser } from "./texting-client.js";

let api: TestApi;
let agent1: TextingUser;
let agent2: TextingUser;
let admin: TextingUser;

beforeAll(async () => {
  api = await startApi();
  agent1 = await textingUser(api, "agent1");
  agent2 = await textingUser(api, "agent2");
  admin = await textingUser(api, "admin");
});

afterAll(async () => {
  await api.close();
});

const CUSTOMER = "+14155551234";

interface Contact {
  id: string;
  phoneNumber: string;
  fullName: string;
  email?: string;
  optedOut: boolean;
  last_message?: string;
  last_message_date?: number;
  unread?: number;
}

interface Message {
  id: string;
  conversationId: string;
  direction: string;
  from: string;
  to: string;
  message: string;
  media: string[];
  status: string;
  read: boolean;
  date: number;
}

async function send(user: TextingUser, body: Record<string, unknown>) {
  return texting<{ status?: string; messageId?: string; errors?: string[] }>(api, "POST", "/send", { bearer: user.bearer, body });
}

describe("platform: per-user texting settings", () => {
  it("shows each demo user their own account_uid, access token and one E.164 number", async () => {
    const numbers = new Set<string>();
    for (const username of ["admin", "agent1", "agent2", "agent3", "supervisor"]) {
      const user = await textingUser(api, username);
      expect(user.number).toMatch(/^\+1415555010[1-5]$/);
      expect(user.accessToken).toMatch(/^[0-9a-f]{48}$/);
      numbers.add(user.number);
    }
    expect(numbers.size).toBe(5);
    const res = await api.call<TextingSettings>("GET", `/v2/accounts/${agent1.accountId}/users/${agent1.userId}/texting`, { token: agent1.token });
    expect(res.body.data).toEqual({ account_uid: agent1.userId, access_token: agent1.accessToken, numbers: [agent1.number], relay_url: null });
  });

  it("lets an admin read another user's settings, but not another user", async () => {
    const byAdmin = await api.call<TextingSettings>("GET", `/v2/accounts/${agent1.accountId}/users/${agent1.userId}/texting`, { token: admin.token });
    expect(byAdmin.status).toBe(200);
    expect(byAdmin.body.data.access_token).toBe(agent1.accessToken);
    const byPeer = await api.call("GET", `/v2/accounts/${agent1.accountId}/users/${agent1.userId}/texting`, { token: agent2.token });
    expect(byPeer.status).toBe(403);
    expect(byPeer.body.message).toBe("forbidden");
    const noToken = await api.call("GET", `/v2/accounts/${agent1.accountId}/users/${agent1.userId}/texting`);
    expect(noToken.status).toBe(401);
    const unknown = await api.call("GET", `/v2/accounts/${agent1.accountId}/users/${"0".repeat(32)}/texting`, { token: admin.token });
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toBe("bad_identifier");
    const other = await createAccount(api, "other-texting");
    const foreign = await api.call("GET", `/v2/accounts/${agent1.accountId}/users/${agent1.userId}/texting`, { token: other.token });
    expect(foreign.status).toBe(403);
  });

  it("rotates the token: the old one stops working, the new one works", async () => {
    const user = await textingUser(api, "agent3");
    const before = await texting(api, "GET", "/contacts", { bearer: user.bearer });
    expect(before.status).toBe(200);
    const res = await api.call<TextingSettings>("POST", `/v2/accounts/${user.accountId}/users/${user.userId}/texting`, { token: user.token, data: { action: "rotate" } });
    expect(res.status).toBe(200);
    expect(res.body.data.access_token).not.toBe(user.accessToken);
    expect((await texting(api, "GET", "/contacts", { bearer: user.bearer })).status).toBe(401);
    const fresh = `Bearer ${user.userId}:${res.body.data.access_token}`;
    expect((await texting(api, "GET", "/contacts", { bearer: fresh })).status).toBe(200);
  });

  it("sets and clears the relay URL, and refuses what is not an http(s) URL", async () => {
    const path = `/v2/accounts/${agent2.accountId}/users/${agent2.userId}/texting`;
    const set = await api.call<TextingSettings>("POST", path, { token: agent2.token, data: { relay_url: "http://127.0.0.1:9/relay" } });
    expect(set.body.data.relay_url).toBe("http://127.0.0.1:9/relay");
    const cleared = await api.call<TextingSettings>("POST", path, { token: agent2.token, data: { relay_url: null } });
    expect(cleared.body.data.relay_url).toBeNull();
    const bad = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: agent2.token, data: { relay_url: "ftp://example.com/x" } });
    expect(bad.status).toBe(400);
    expect(bad.body.data.relay_url).toHaveProperty("format");
    const action = await api.call("POST", path, { token: agent2.token, data: { action: "shred" } });
    expect(action.status).toBe(400);
    expect(action.body.message).toBe("invalid data");
    const nothing = await api.call("POST", path, { token: agent2.token, data: {} });
    expect(nothing.status).toBe(400);
  });

  it("lets only an admin assign numbers, each E.164 and to one user", async () => {
    const path = `/v2/accounts/${agent2.accountId}/users/${agent2.userId}/texting`;
    const self = await api.call("POST", path, { token: agent2.token, data: { numbers: ["+14155550199"] } });
    expect(self.status).toBe(403);
    const taken = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: admin.token, data: { numbers: [agent1.number] } });
    expect(taken.status).toBe(400);
    expect(taken.body.data.numbers).toHaveProperty("unique");
    const bad = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: admin.token, data: { numbers: ["4155550199"] } });
    expect(bad.status).toBe(400);
    expect(bad.body.data["numbers.0"]).toHaveProperty("e164");
    const ok = await api.call<TextingSettings>("POST", path, { token: admin.token, data: { numbers: [agent2.number, "+14155550199"] } });
    expect(ok.body.data.numbers).toEqual([agent2.number, "+14155550199"]);
    // The new number can be sent from at once.
    expect((await send(agent2, { to: CUSTOMER, from: "+14155550199", message: "from my second line" })).status).toBe(200);
    await api.call("POST", path, { token: admin.token, data: { numbers: [agent2.number] } });
  });
});

describe("texting API auth", () => {
  it("answers 401 Unauthorized for a missing, malformed or wrong Bearer, on every route", async () => {
    const wrongToken = `Bearer ${agent1.userId}:${"0".repeat(48)}`;
    const unknownUser = `Bearer ${"a".repeat(32)}:${agent1.accessToken}`;
    const someoneElse = `Bearer ${agent2.userId}:${agent1.accessToken}`;
    for (const bearer of [null, "Bearer", `Bearer ${agent1.accessToken}`, `Basic ${agent1.userId}:${agent1.accessToken}`, wrongToken, unknownUser, someoneElse]) {
      for (const [method, path] of [["POST", "/send"], ["GET", "/contacts"], ["POST", "/contacts"], ["GET", "/contacts/x"], ["POST", "/contacts/x"]] as const) {
        const res = await texting(api, method, path, { bearer, body: method === "POST" ? { to: CUSTOMER } : undefined });
        expect(res.status, `${String(bearer)} ${method} ${path}`).toBe(401);
        expect(res.body).toEqual({ errors: ["Unauthorized"] });
      }
    }
  });

  it("stops a disabled user's token", async () => {
    const supervisor = await textingUser(api, "supervisor");
    const users = await api.call<Record<string, unknown>>("GET", `/v2/accounts/${admin.accountId}/users/${supervisor.userId}`, { token: admin.token });
    const { id: _id, ...doc } = users.body.data;
    await api.call("POST", `/v2/accounts/${admin.accountId}/users/${supervisor.userId}`, { token: admin.token, data: { ...doc, enabled: false } });
    expect((await texting(api, "GET", "/contacts", { bearer: supervisor.bearer })).status).toBe(401);
    await api.call("POST", `/v2/accounts/${admin.accountId}/users/${supervisor.userId}`, { token: admin.token, data: { ...doc, enabled: true } });
    expect((await texting(api, "GET", "/contacts", { bearer: supervisor.bearer })).status).toBe(200);
  });
});

describe("POST /api/send", () => {
  it("sends: 200 {status:'true'}, the message is in the conversation with the contact", async () => {
    const res = await send(agent1, { to: CUSTOMER, from: agent1.number, message: "Hello from Switchboard", media: ["https://example.com/a.png"] });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("true");
    expect(res.body.messageId).toMatch(/^[0-9a-f]{32}$/);
    const list = await texting<{ contacts: Contact[] }>(api, "GET", "/contacts", { bearer: agent1.bearer });
    const contact = list.body.contacts.find((c) => c.phoneNumber === CUSTOMER);
    // fullName defaults to the number.
    expect(contact).toMatchObject({ phoneNumber: CUSTOMER, fullName: CUSTOMER, optedOut: false, last_message: "Hello from Switchboard" });
    expect(typeof contact?.last_message_date).toBe("number");
    const thread = await texting<{ messages: Message[] }>(api, "GET", `/contacts/${contact?.id}/messages`, { bearer: agent1.bearer });
    const message = thread.body.messages.find((m) => m.id === res.body.messageId);
    expect(message).toMatchObject({ direction: "out", from: agent1.number, to: CUSTOMER, message: "Hello from Switchboard", media: ["https://example.com/a.png"] });
    expect(["queued", "sent", "delivered"]).toContain(message?.status);
  });

  it("names each missing parameter", async () => {
    const full = { to: CUSTOMER, from: agent1.number, message: "hi" };
    for (const field of ["to", "from", "message"] as const) {
      const { [field]: _dropped, ...rest } = full;
      const res = await send(agent1, rest);
      expect(res.status, field).toBe(400);
      expect(res.body).toEqual({ errors: [`Missing parameter '${field}'`] });
    }
    const none = await send(agent1, {});
    expect(none.status).toBe(400);
    expect(none.body.errors).toEqual(["Missing parameter 'to'", "Missing parameter 'from'", "Missing parameter 'message'"]);
    const notObject = await texting(api, "POST", "/send", { bearer: agent1.bearer, body: "[1,2]" });
    expect(notObject.status).toBe(400);
    expect(notObject.body.errors).toContain("Missing parameter 'to'");
  });

  it("refuses numbers that are not E.164", async () => {
    for (const bad of ["4155551234", "+1 415 555 1234", "+1415555123", "+99912345", "not a number", 14155551234]) {
      const res = await send(agent1, { to: bad, from: agent1.number, message: "hi" });
      expect(res.status, String(bad)).toBe(400);
      expect(res.body.errors).toEqual([`Invalid phone number '${typeof bad === "string" ? bad : JSON.stringify(bad)}'`]);
    }
    const from = await send(agent1, { to: CUSTOMER, from: "415-555-0102", message: "hi" });
    expect(from.body.errors).toEqual(["Invalid phone number '415-555-0102'"]);
  });

  it("refuses a from number that is not the user's", async () => {
    for (const from of [agent2.number, "+14155559876"]) {
      const res = await send(agent1, { to: CUSTOMER, from, message: "hi" });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual([`Invalid parameter 'from': '${from}' is not a number assigned to this user`]);
    }
  });

  it("refuses bad message, media and sendStatus values, and a body that is not JSON", async () => {
    const base = { to: CUSTOMER, from: agent1.number };
    expect((await send(agent1, { ...base, message: 42 })).body.errors).toEqual(["Invalid parameter 'message': must be a string"]);
    expect((await send(agent1, { ...base, message: "x".repeat(1601) })).body.errors).toEqual(["Invalid parameter 'message': longer than 1600 characters"]);
    expect((await send(agent1, { ...base, message: "  " })).body.errors).toEqual(["Invalid parameter 'message': empty, and there is no media"]);
    expect((await send(agent1, { ...base, message: "hi", media: "http://x/y.png" })).body.errors).toEqual(["Invalid parameter 'media': must be an array of at most 10 http(s) URLs"]);
    expect((await send(agent1, { ...base, message: "hi", media: ["file:///etc/passwd"] })).status).toBe(400);
    expect((await send(agent1, { ...base, message: "hi", sendStatus: "delivered" })).body.errors).toEqual(["Invalid parameter 'sendStatus': the only value is 'sent'"]);
    const notJson = await texting(api, "POST", "/send", { bearer: agent1.bearer, body: "{to:", headers: { "Content-Type": "application/json" } });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({ errors: ["The request body is not valid JSON"] });
    // A picture alone is a message.
    expect((await send(agent1, { ...base, message: "", media: ["https://example.com/p.jpg"] })).status).toBe(200);
  });
});

describe("contacts", () => {
  it("creates, reads, updates and lists a contact", async () => {
    const created = await texting<Contact>(api, "POST", "/contacts", { bearer: agent1.bearer, body: { phoneNumber: "+14155552000", fullName: "Jo Customer", email: "jo@example.com" } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ id: expect.stringMatching(/^[0-9a-f]{32}$/), phoneNumber: "+14155552000", fullName: "Jo Customer", email: "jo@example.com", optedOut: false });
    const read = await texting<Contact>(api, "GET", `/contacts/${created.body.id}`, { bearer: agent1.bearer });
    expect(read.body).toEqual(created.body);
    const updated = await texting<Contact>(api, "POST", `/contacts/${created.body.id}`, { bearer: agent1.bearer, body: { phoneNumber: "+14155552001", fullName: "Jo C." } });
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual({ id: created.body.id, phoneNumber: "+14155552001", fullName: "Jo C.", optedOut: false });
    const defaulted = await texting<Contact>(api, "POST", "/contacts", { bearer: agent1.bearer, body: { phoneNumber: "+14155552002" } });
    expect(defaulted.body.fullName).toBe("+14155552002");
    const list = await texting<{ contacts: Contact[] }>(api, "GET", "/contacts", { bearer: agent1.bearer });
    expect(list.status).toBe(200);
    expect(list.body.contacts.map((c) => c.id)).toEqual(expect.arrayContaining([created.body.id, defaulted.body.id]));
    const search = await texting<{ contacts: Contact[] }>(api, "GET", "/contacts?search=jo%20c", { bearer: agent1.bearer });
    expect(search.body.contacts.map((c) => c.id)).toEqual([created.body.id]);
    // Another user's contacts are theirs alone.
    const theirs = await texting<{ contacts: Contact[] }>(api, "GET", "/contacts", { bearer: agent2.bearer });
    expect(theirs.body.contacts.map((c) => c.id)).not.toContain(created.body.id);
  });

  it("names a missing or invalid phoneNumber and a bad e-mail, on create and update", async () => {
    const existing = await texting<Contact>(api, "POST", "/contacts", { bearer: agent1.bearer, body: { phoneNumber: "+14155552100" } });
    for (const path of ["/contacts", `/contacts/${existing.body.id}`]) {
      expect((await texting(api, "POST", path, { bearer: agent1.bearer, body: { fullName: "No Number" } })).body).toEqual({ errors: ["Missing parameter 'phoneNumber'"] });
      expect((await texting(api, "POST", path, { bearer: agent1.bearer, body: { phoneNumber: "555-1234" } })).body).toEqual({ errors: ["Invalid phone number '555-1234'"] });
      const email = await texting(api, "POST", path, { bearer: agent1.bearer, body: { phoneNumber: "+14155552101", email: "nope" } });
      expect(email.status).toBe(400);
      expect(email.body).toEqual({ errors: ["Invalid parameter 'email': 'nope' is not an e-mail address"] });
    }
    const duplicate = await texting<{ errors: string[] }>(api, "POST", "/contacts", { bearer: agent1.bearer, body: { phoneNumber: "+14155552100" } });
    expect(duplicate.status).toBe(400);
    expect(duplicate.body.errors[0]).toContain(existing.body.id);
  });

  it("answers 400 naming an unknown contact id, also another user's contact", async () => {
    const theirs = await texting<Contact>(api, "POST", "/contacts", { bearer: agent2.bearer, body: { phoneNumber: "+14155552200" } });
    for (const id of ["0".repeat(32), "not-an-id", theirs.body.id]) {
      for (const [method, path, body] of [
        ["GET", `/contacts/${id}`, undefined],
        ["POST", `/contacts/${id}`, { phoneNumber: "+14155552201" }],
        ["GET", `/contacts/${id}/messages`, undefined],
        ["POST", `/contacts/${id}/read`, undefined],
      ] as const) {
        const res = await texting(api, method, path, { bearer: agent1.bearer, body });
        expect(res.status, `${method} ${path}`).toBe(400);
        expect(res.body).toEqual({ errors: [`Contact '${id}' not found`] });
      }
    }
  });

  it("answers 404 {errors} for a path the texting API does not have", async () => {
    const res = await texting(api, "GET", "/nothing-here", { bearer: agent1.bearer });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ errors: ["Not found"] });
  });
});

describe("inbound texts (POST /v2/accounts/{id}/sim/messages)", () => {
  it("injects a text to a user's number: a new contact, an unread message, marked read on request", async () => {
    const res = await api.call<Message & { contact: Contact }>("POST", `/v2/accounts/${admin.accountId}/sim/messages`, {
      token: admin.token,
      data: { from: "+14155553000", to: agent1.number, body: "Is my order ready?", media: ["https://example.com/receipt.jpg"] },
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ direction: "in", from: "+14155553000", to: agent1.number, message: "Is my order ready?", status: "received", read: false, media: ["https://example.com/receipt.jpg"] });
    expect(res.body.data.contact).toMatchObject({ phoneNumber: "+14155553000", fullName: "+14155553000" });
    const contactId = res.body.data.contact.id;
    const list = await texting<{ contacts: Contact[] }>(api, "GET", "/contacts", { bearer: agent1.bearer });
    expect(list.body.contacts[0]).toMatchObject({ id: contactId, unread: 1, last_message: "Is my order ready?" });
    const read = await texting<{ status: string; marked: number }>(api, "POST", `/contacts/${contactId}/read`, { bearer: agent1.bearer });
    expect(read.body).toEqual({ status: "true", marked: 1 });
    const after = await texting<{ contacts: Contact[] }>(api, "GET", "/contacts", { bearer: agent1.bearer });
    expect(after.body.contacts.find((c) => c.id === contactId)?.unread).toBe(0);
  });

  it("needs an admin, every field, E.164 numbers and a texting number of the account", async () => {
    const path = `/v2/accounts/${admin.accountId}/sim/messages`;
    const data = { from: "+14155553001", to: agent1.number, body: "hi" };
    expect((await api.call("POST", path, { token: agent1.token, data })).status).toBe(403);
    for (const field of ["from", "to", "body"] as const) {
      const { [field]: _dropped, ...rest } = data;
      const res = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: admin.token, data: rest });
      expect(res.status).toBe(400);
      expect(res.body.data[field]).toHaveProperty("required");
    }
    const bad = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: admin.token, data: { ...data, from: "4155553001" } });
    expect(bad.body.data.from).toHaveProperty("e164");
    const stranger = await api.call<Record<string, Record<string, unknown>>>("POST", path, { token: admin.token, data: { ...data, to: "+14155559999" } });
    expect(stranger.status).toBe(400);
    expect(stranger.body.data.to).toHaveProperty("texting_number");
  });
});

describe("MMS images (POST /api/media)", () => {
  it("stores an image and serves it at the URL it answers", async () => {
    const res = await texting<{ url: string; contentType: string; length: number }>(api, "POST", "/media", {
      bearer: agent1.bearer,
      body: TINY_PNG,
      headers: { "Content-Type": "image/png" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ contentType: "image/png", length: TINY_PNG.length });
    expect(res.body.url).toMatch(new RegExp(`^${api.url}/texting/media/${agent1.accountId}/[0-9a-f]{32}$`));
    const image = await fetch(res.body.url);
    expect(image.status).toBe(200);
    expect(image.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await image.arrayBuffer()).equals(TINY_PNG)).toBe(true);
    // The URL can go out in a message.
    expect((await send(agent1, { to: CUSTOMER, from: agent1.number, message: "", media: [res.body.url] })).status).toBe(200);
  });

  it("refuses other types, bytes that are not the type, empty and oversized images, with clear errors", async () => {
    const upload = (body: Buffer, type: string) => texting<{ errors: string[] }>(api, "POST", "/media", { bearer: agent1.bearer, body, headers: { "Content-Type": type } });
    const text = await upload(Buffer.from("hello"), "text/plain");
    expect(text.status).toBe(400);
    expect(text.body.errors[0]).toMatch(/^Unsupported media type 'text\/plain'/);
    const liar = await upload(Buffer.from("GIF89a but really text"), "image/png");
    expect(liar.body).toEqual({ errors: ["The bytes are not an image/png image"] });
    const empty = await upload(Buffer.alloc(0), "image/png");
    expect(empty.status).toBe(400);
    const big = Buffer.concat([TINY_PNG, Buffer.alloc(5 * 1024 * 1024)]);
    const large = await upload(big, "image/png");
    expect(large.status).toBe(400);
    expect(large.body.errors[0]).toMatch(/larger than 5242880 bytes/);
    expect((await fetch(`${api.url}/texting/media/${agent1.accountId}/${"0".repeat(32)}`)).status).toBe(404);
    expect((await fetch(`${api.url}/texting/media/${"1".repeat(32)}/${"0".repeat(32)}`)).status).toBe(404);
  });
});
