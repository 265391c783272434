import { createHash } from "node:crypto";
import { readFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { createAccount, credentials, startApi, type TestApi } from "../helpers/api.js";

const person = { first_name: "Pat", last_name: "Doe" };

describeConformance({
  name: "users",
  field: "first_name",
  adminWrites: true,
  valid: (n) => ({
    username: `user${n}`,
    first_name: `First${n}`,
    last_name: `Last${n}`,
    email: `user${n}@example.com`,
    password: `secret-${n}`,
  }),
  writeOnly: ["password"],
  invalid: [
    { title: "an unknown priv_level", data: { ...person, username: "p1", password: "pw", priv_level: "root" }, field: "priv_level", rule: "enum" },
    { title: "a missing password", data: { ...person, username: "nopass" }, field: "password", rule: "required" },
    { title: "an empty password", data: { ...person, username: "p2", password: "" }, field: "password", rule: "minLength" },
    { title: "a missing last_name", data: { username: "p3", first_name: "Pat", password: "pw" }, field: "last_name", rule: "required" },
    { title: "a hotdesk that is not an object", data: { ...person, hotdesk: true }, field: "hotdesk", rule: "type" },
    { title: "a non-boolean hotdesk.require_pin", data: { ...person, hotdesk: { require_pin: "yes" } }, field: "hotdesk.require_pin", rule: "type" },
    { title: "a non-boolean vm_to_email_enabled", data: { ...person, vm_to_email_enabled: "yes" }, field: "vm_to_email_enabled", rule: "type" },
    { title: "an unknown media.encryption method", data: { ...person, media: { encryption: { methods: ["rot13"] } } }, field: "media.encryption.methods.0", rule: "enum" },
    { title: "a username with a space", data: { ...person, username: "pat doe", password: "pw" }, field: "username", rule: "pattern" },
    { title: "a username over 128 characters", data: { ...person, username: "u".repeat(129), password: "pw" }, field: "username", rule: "maxLength" },
    { title: "a malformed email", data: { ...person, username: "p4", password: "pw", email: "not-an-email" }, field: "email", rule: "format" },
    { title: "a non-boolean enabled", data: { ...person, username: "p5", password: "pw", enabled: "yes" }, field: "enabled", rule: "type" },
    { title: "a pin that is not 4 to 16 digits", data: { ...person, username: "p6", password: "pw", callq: { pin: "12" } }, field: "callq.pin", rule: "pattern" },
    { title: "an unknown callq permission", data: { ...person, username: "p7", password: "pw", callq: { permissions: ["root"] } }, field: "callq.permissions.0", rule: "enum" },
    { title: "a username in use (any case)", data: { ...person, username: "AGENT1", password: "pw" }, field: "username", rule: "unique" },
    { title: "a pin in use", data: { ...person, username: "p8", password: "pw", callq: { pin: "1002" } }, field: "callq.pin", rule: "unique" },
  ],
});

type User = Record<string, unknown> & { id: string };

describe("users: credentials, ordering, guards and owned devices", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let adminId: string;
  let base: string;
  let counter = 0;

  beforeAll(async () => {
    api = await startApi();
    const login = await api.login("admin");
    ({ token, accountId } = login);
    adminId = login.ownerId;
    base = `/v2/accounts/${accountId}/users`;
  });
  afterAll(async () => {
    await api.close();
  });

  const createUser = async (data: Record<string, unknown> = {}): Promise<User> => {
    counter++;
    const res = await api.call<User>("PUT", base, {
      token,
      data: { username: `person${counter}`, first_name: "Pat", last_name: `Doe${counter}`, password: `pw-${counter}`, ...data },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  const userLogin = (username: string, password: string, method?: "sha") =>
    api.call<{ owner_id: string }>("PUT", "/v2/user_auth", {
      data: {
        credentials: method ? createHash("sha1").update(`${username.toLowerCase()}:${password}`).digest("hex") : credentials(username, password),
        account_name: "demo",
        ...(method ? { method } : {}),
      },
    });

  it("fills the defaults: priv_level user, enabled, callq off with no permissions", async () => {
    const user = await createUser();
    expect(user).toMatchObject({ priv_level: "user", enabled: true, callq: { enabled: false, permissions: [] } });
    expect(Object.keys(user).filter((k) => k === "password" || k.startsWith("pvt_"))).toEqual([]);
  });

  it("gives the demo account's seeded users the same defaults as a created user", async () => {
    const created = await createUser();
    const seeded = (await api.call<User>("GET", `${base}/${adminId}`, { token })).body.data;
    const ownKeys = ["id", "username", "first_name", "last_name", "email", "priv_level", "presence_id", "caller_id", "callq", "timezone"];
    const defaults = (u: User) => Object.keys(u).filter((k) => !ownKeys.includes(k)).sort();
    expect(defaults(seeded)).toEqual(defaults(created));
    expect(seeded).toMatchObject({ hotdesk: { enabled: false }, media: { audio: { codecs: ["PCMU"] } }, vm_to_email_enabled: true });
  });

  it("never answers nor stores the password in clear", async () => {
    const password = "Clear-Text-Marker-7731";
    const user = await createUser({ username: "secretive", password });
    const texts: string[] = [];
    const calls = [
      await api.call("GET", `${base}/${user.id}`, { token }),
      await api.call("GET", base, { token, query: { paginate: "false" } }),
      await api.call("GET", base, { token, query: { accept: "csv" } }),
      await api.call("PATCH", `${base}/${user.id}`, { token, data: { first_name: "Kept", password } }),
      await api.call("POST", `${base}/${user.id}`, { token, data: { username: "secretive", ...person, password } }),
    ];
    for (const res of calls) {
      expect(res.status, res.text).toBe(200);
      texts.push(res.text);
    }
    const hashes = [credentials("secretive", password), createHash("sha1").update(`secretive:${password}`).digest("hex")];
    for (const text of texts) {
      expect(text).not.toContain(password);
      expect(text).not.toContain("pvt_");
      for (const hash of hashes) expect(text).not.toContain(hash);
    }

    await api.server.store.flush();
    const files = (await readdir(api.dataDir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
    const onDisk = await Promise.all(files.map((f) => readFile(join(f.parentPath, f.name), "utf8")));
    // The users collection's own file: the event log holds the name too (directory.user events).
    const usersFile = onDisk.find((text, i) => files[i]?.name.startsWith("users") === true && text.includes('"username":"secretive"'));
    expect(usersFile, "the users file holds the new user").toBeDefined();
    expect(usersFile).toContain(hashes[0]);
    expect(usersFile).not.toContain('"password"');
    for (const text of onDisk) expect(text).not.toContain(password);
  });

  it("lets the user log in with md5 or sha1 of the new credentials", async () => {
    const user = await createUser({ username: "Newcomer", password: "fresh-start" });
    for (const method of [undefined, "sha"] as const) {
      const res = await userLogin("newcomer", "fresh-start", method);
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.owner_id).toBe(user.id);
    }
  });

  it("revokes the user's tokens when the password changes, and only then", async () => {
    const user = await createUser({ username: "rotator", password: "first-pass" });
    const session = await api.login("rotator", "first-pass");
    const mine = `${base}/${user.id}`;
    expect((await api.call("GET", mine, { token: session.token })).status).toBe(200);

    const same = await api.call("PATCH", mine, { token, data: { first_name: "Same", password: "first-pass" } });
    expect(same.status).toBe(200);
    expect((await api.call("GET", mine, { token: session.token })).status).toBe(200);

    const changed = await api.call("PATCH", mine, { token, data: { password: "second-pass" } });
    expect(changed.status, changed.text).toBe(200);
    expect((await api.call("GET", mine, { token: session.token })).status).toBe(401);
    expect((await userLogin("rotator", "first-pass")).status).toBe(401);
    expect((await userLogin("rotator", "second-pass")).status).toBe(201);
  });

  it("revokes a disabled user's tokens and refuses its logins", async () => {
    const user = await createUser({ username: "leaver", password: "bye-bye" });
    const session = await api.login("leaver", "bye-bye");
    const res = await api.call("PATCH", `${base}/${user.id}`, { token, data: { enabled: false } });
    expect(res.status).toBe(200);
    expect((await api.call("GET", base, { token: session.token })).status).toBe(401);
    expect((await userLogin("leaver", "bye-bye")).status).toBe(401);
    // Enabling the user again does not bring the old session back.
    expect((await api.call("PATCH", `${base}/${user.id}`, { token, data: { enabled: true } })).status).toBe(200);
    expect((await api.call("GET", base, { token: session.token })).status).toBe(401);
    expect((await userLogin("leaver", "bye-bye")).status).toBe(201);
  });

  it("creates a user from a name alone, as Kazoo's users document does: no username, no way to log in", async () => {
    const res = await api.call<User>("PUT", base, { token, data: { first_name: "Nameonly", last_name: "Person" } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data).toMatchObject({ first_name: "Nameonly", last_name: "Person", enabled: true, priv_level: "user" });
    expect(res.body.data).not.toHaveProperty("username");
    const listed = await api.call<User[]>("GET", base, { token, query: { paginate: "false" } });
    expect(listed.body.data.map((u) => u.id)).toContain(res.body.data.id);
    // A second one is no clash: uniqueness is about usernames, and neither has one.
    expect((await api.call("PUT", base, { token, data: { first_name: "Nameonly", last_name: "Person" } })).status).toBe(201);
    // Given a password later, the user gets Kazoo's generated username and can log in with it.
    const given = await api.call<User>("PATCH", `${base}/${res.body.data.id}`, { token, data: { password: "late-pass" } });
    expect(given.status, given.text).toBe(200);
    expect(String(given.body.data.username)).toMatch(/^user_[a-z0-9]{8}$/);
    expect((await userLogin(String(given.body.data.username), "late-pass")).status).toBe(201);
  });

  it("generates a username for a new user given only a password", async () => {
    const res = await api.call<User>("PUT", base, { token, data: { ...person, password: "pw-only" } });
    expect(res.status, res.text).toBe(201);
    expect(String(res.body.data.username)).toMatch(/^user_[a-z0-9]{8}$/);
    expect((await userLogin(String(res.body.data.username), "pw-only")).status).toBe(201);
  });

  it("needs the password with a new username, since the hashes cover both", async () => {
    const user = await createUser({ username: "renamed", password: "keep-me" });
    const path = `${base}/${user.id}`;
    const bare = await api.call<Record<string, Record<string, unknown>>>("PATCH", path, { token, data: { username: "renamed2" } });
    expect(bare.status).toBe(400);
    expect(bare.body.data.password).toHaveProperty("required");

    // Only the case changes: lowercase(username) is what is hashed, so the hashes still hold.
    expect((await api.call("PATCH", path, { token, data: { username: "Renamed" } })).status).toBe(200);
    expect((await userLogin("renamed", "keep-me")).status).toBe(201);

    const full = await api.call("PATCH", path, { token, data: { username: "renamed2", password: "keep-me" } });
    expect(full.status, full.text).toBe(200);
    expect((await userLogin("renamed2", "keep-me")).status).toBe(201);
    expect((await userLogin("renamed", "keep-me")).status).toBe(401);
  });

  it("keeps usernames unique within the account whatever the case, but not across accounts", async () => {
    const clash = await api.call<Record<string, Record<string, unknown>>>("PUT", base, { token, data: { ...person, username: "Supervisor", password: "x" } });
    expect(clash.status).toBe(400);
    expect(clash.body.data.username).toHaveProperty("unique");
    const taken = await createUser({ username: "taken-name" });
    const other = await api.call<Record<string, Record<string, unknown>>>("POST", `${base}/${taken.id}`, {
      token,
      data: { ...person, username: "AGENT2", password: "x" },
    });
    expect(other.status).toBe(400);
    expect(other.body.data.username).toHaveProperty("unique");

    const elsewhere = await createAccount(api, `users${Date.now()}`);
    const res = await api.call("PUT", `/v2/accounts/${elsewhere.accountId}/users`, {
      token: elsewhere.token,
      data: { ...person, username: "agent1", password: "x" },
    });
    expect(res.status, res.text).toBe(201);
  });

  it("fills Kazoo's defaults under objects sent in part (media, hotdesk) and keeps what was sent", async () => {
    const user = await createUser({ media: { audio: { codecs: ["OPUS"] } }, hotdesk: { enabled: true }, vm_to_email_enabled: false, timezone: "UTC" });
    expect(user).toMatchObject({
      media: { audio: { codecs: ["OPUS"] }, video: { codecs: [] }, encryption: { enforce_security: false, methods: [] } },
      hotdesk: { enabled: true, keep_logged_in_elsewhere: false, require_pin: false },
      vm_to_email_enabled: false,
      verified: false,
    });
    const res = await api.call<User[]>("GET", base, { token, query: { paginate: "false" } });
    // The listing's features follow the document as Kazoo's view derives them.
    expect(res.body.data.find((r) => r.id === user.id)).toMatchObject({ features: ["hotdesk"], timezone: "UTC" });
  });

  it("lists rows of {id, username, first_name, last_name, email, priv_level, enabled, presence_id, callq.enabled} and Kazoo's features and flags", async () => {
    const res = await api.call<User[]>("GET", base, { token, query: { paginate: "false" } });
    const agent = res.body.data.find((r) => r.username === "agent1");
    expect(agent).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      username: "agent1",
      first_name: "Alex",
      last_name: "Agent",
      email: "agent1@demo.switchboard.local",
      priv_level: "user",
      enabled: true,
      presence_id: "1002",
      callq: { enabled: true },
      // Seeded with Kazoo's user defaults, as a created user is: vm_to_email_enabled is on.
      features: ["vm_to_email"],
      flags: [],
    });
  });

  it("sorts the list by last name, then first name, case-insensitively, across pages", async () => {
    const tag = `sort${Date.now()}`;
    const made = [
      await createUser({ last_name: "Lin", first_name: "Ann", sb_test: { tag } }),
      await createUser({ last_name: "Li", first_name: "Zoe", sb_test: { tag } }),
      await createUser({ last_name: "li", first_name: "bob", sb_test: { tag } }),
      await createUser({ last_name: "Abel", first_name: "Zed", sb_test: { tag } }),
    ];
    const byId = new Map(made.map((u) => [u.id, `${String(u.first_name)} ${String(u.last_name)}`]));
    const seen: string[] = [];
    let start: string | undefined;
    do {
      const page = await api.call<User[]>("GET", base, { token, query: { "filter_sb_test.tag": tag, page_size: "1", ...(start ? { start_key: start } : {}) } });
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((r) => byId.get(r.id) ?? r.id));
      start = page.body.next_start_key;
    } while (start);
    expect(seen).toEqual(["Zed Abel", "bob li", "Zoe Li", "Ann Lin"]);

    const demo = await api.call<User[]>("GET", base, { token, query: { paginate: "false", filter_last_name: "Agent" } });
    expect(demo.body.data.map((r) => r.username)).toEqual(["agent1", "agent2", "agent3"]);
    const reversed = await api.call<User[]>("GET", base, { token, query: { paginate: "false", "filter_sb_test.tag": tag, descending: "true" } });
    expect(reversed.body.data.map((r) => byId.get(r.id))).toEqual(["Ann Lin", "Zoe Li", "bob li", "Zed Abel"]);
  });

  it("refuses to delete, demote or disable the account's last enabled admin", async () => {
    const admin = `${base}/${adminId}`;
    for (const [method, options, field] of [
      ["DELETE", {}, "priv_level"],
      ["POST", { query: { verb: "DELETE" } }, "priv_level"],
      ["PATCH", { data: { priv_level: "user" } }, "priv_level"],
      ["PATCH", { data: { enabled: false } }, "enabled"],
    ] as const) {
      const res = await api.call<Record<string, Record<string, unknown>>>(method, admin, { token, ...options });
      expect(res.status, `${method} ${JSON.stringify(options)}`).toBe(400);
      expect(res.body).toMatchObject({ message: "validation error" });
      expect(res.body.data[field]).toHaveProperty("last_admin");
    }
    const still = await api.call<User>("GET", admin, { token });
    expect(still.body.data).toMatchObject({ priv_level: "admin", enabled: true });
    expect(still.body.revision).toMatch(/^1-/);

    // A disabled admin does not count: it cannot log in either.
    const dormant = await createUser({ priv_level: "admin" });
    expect((await api.call("PATCH", `${base}/${dormant.id}`, { token, data: { enabled: false } })).status).toBe(200);
    expect((await api.call("DELETE", admin, { token })).status).toBe(400);

    // With a second enabled admin, either may go.
    const second = await createUser({ priv_level: "admin" });
    expect((await api.call("PATCH", `${base}/${second.id}`, { token, data: { priv_level: "user" } })).status).toBe(200);
    const third = await createUser({ priv_level: "admin" });
    expect((await api.call("DELETE", `${base}/${third.id}`, { token })).status).toBe(200);
  });

  it("lists the devices a user owns, and unassigns them when the user is deleted", async () => {
    const user = await createUser();
    const devices = `/v2/accounts/${accountId}/devices`;
    const made = await api.call<{ id: string }>("PUT", devices, { token, data: { name: `desk of ${user.id}`, owner_id: user.id } });
    expect(made.status, made.text).toBe(201);
    await api.call("PUT", devices, { token, data: { name: "nobody's phone" } });

    const owned = await api.call<Record<string, unknown>[]>("GET", `${base}/${user.id}/devices`, { token });
    expect(owned.status).toBe(200);
    expect(owned.body.data).toEqual([
      { id: made.body.data.id, name: `desk of ${user.id}`, username: expect.any(String), mac_address: "", owner_id: user.id, enabled: true, device_type: "sip_device", flags: [], hotdesked: false },
    ]);
    expect(owned.body.page_size).toBe(1);

    const agent = await api.login("agent1");
    const softphones = await api.call<{ name: string }[]>("GET", `${base}/${agent.ownerId}/devices`, { token: agent.token });
    expect(softphones.body.data.map((d) => d.name)).toEqual(["agent1 softphone"]);

    const missing = "0".repeat(32);
    const unknown = await api.call("GET", `${base}/${missing}/devices`, { token });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ message: "bad_identifier", data: { cause: missing } });
    const elsewhere = await createAccount(api, `devices${Date.now()}`);
    expect((await api.call("GET", `${base}/${user.id}/devices`, { token: elsewhere.token })).status).toBe(403);

    expect((await api.call("DELETE", `${base}/${user.id}`, { token })).status).toBe(200);
    const device = await api.call<Record<string, unknown>>("GET", `${devices}/${made.body.data.id}`, { token });
    expect(device.status).toBe(200);
    expect(device.body.data).not.toHaveProperty("owner_id");
    expect((await api.call("PATCH", `${devices}/${made.body.data.id}`, { token, data: { name: "hot desk" } })).status).toBe(200);
  });

  it("revokes a deleted user's tokens", async () => {
    await createUser({ username: "goner", password: "so-long" });
    const session = await api.login("goner", "so-long");
    const list = await api.call<User[]>("GET", base, { token, query: { filter_username: "goner" } });
    const id = list.body.data[0]?.id ?? "";
    expect((await api.call("DELETE", `${base}/${id}`, { token })).status).toBe(200);
    expect((await api.call("GET", base, { token: session.token })).status).toBe(401);
  });
});
