import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";

describeConformance({
  name: "blacklists",
  field: "name",
  adminWrites: true,
  valid: (n) => ({ name: `blocklist ${n}`, numbers: { [`+1415555${2600 + n}`]: {} }, should_block_anonymous: n % 2 === 0 }),
  invalid: [
    { title: "a missing name", data: { numbers: {} }, field: "name", rule: "required" },
    { title: "an empty name", data: { name: "" }, field: "name", rule: "minLength" },
    { title: "a name over 128 characters", data: { name: "x".repeat(129) }, field: "name", rule: "maxLength" },
    { title: "numbers that are not an object", data: { name: "b", numbers: ["+14155552671"] }, field: "numbers", rule: "type" },
    { title: "a number whose value is not an object", data: { name: "b", numbers: { "+14155552671": true } }, field: "numbers.+14155552671", rule: "type" },
    { title: "a key that is not a phone number", data: { name: "b", numbers: { "12345": {} } }, field: "numbers.12345", rule: "e164" },
    { title: "a non-boolean should_block_anonymous", data: { name: "b", should_block_anonymous: "yes" }, field: "should_block_anonymous", rule: "type" },
  ],
  // The collection path answers POST (the id-less update), so only DELETE is refused there.
  refusedOnCollection: ["DELETE"],
});

describe("blacklists: the hosted service's shapes", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let base: string;
  beforeAll(async () => {
    api = await startApi();
    ({ token, accountId } = await api.login("admin"));
    base = `/v2/accounts/${accountId}/blacklists`;
  });
  afterAll(async () => {
    await api.close();
  });

  const create = async (data: Record<string, unknown>, path = base, as = token) => {
    const res = await api.call<Record<string, unknown>>("PUT", path, { token: as, data });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };

  it("stores every number key in E.164 form, merging two spellings of one number", async () => {
    const list = await create({
      name: "spam",
      numbers: { "(415) 555-2671": {}, "+44 20 7946 0958": { note: "london" }, "+1 415 555 2671": { note: "dup" } },
    });
    expect(list.numbers).toEqual({ "+14155552671": { note: "dup" }, "+442079460958": { note: "london" } });
    const read = await api.call<Record<string, unknown>>("GET", `${base}/${String(list.id)}`, { token });
    expect(read.body.data.numbers).toEqual(list.numbers);
  });

  it("normalises numbers PATCHed in, and a null removes one", async () => {
    const list = await create({ name: "patched", numbers: { "+14155552671": {} } });
    const path = `${base}/${String(list.id)}`;
    const added = await api.call<Record<string, unknown>>("PATCH", path, { token, data: { numbers: { "212-555-0100": {} } } });
    expect(added.status, added.text).toBe(200);
    expect(added.body.data.numbers).toEqual({ "+14155552671": {}, "+12125550100": {} });
    const removed = await api.call<Record<string, unknown>>("PATCH", path, { token, data: { numbers: { "+14155552671": null } } });
    expect(removed.body.data.numbers).toEqual({ "+12125550100": {} });
  });

  it("reads national numbers in the account's country, US when it has none", async () => {
    const us = await create({ name: "us", numbers: { "415 555 2671": {} } });
    expect(us.numbers).toEqual({ "+14155552671": {} });

    const other = await createAccount(api, `gb${Date.now()}`);
    const accounts = await api.server.store.global("accounts");
    const account = accounts.get(other.accountId);
    expect(account).toBeDefined();
    if (account) await accounts.update(account.id, { ...account.data, country: "GB" });
    const gb = await create({ name: "gb", numbers: { "020 7946 0958": {} } }, `/v2/accounts/${other.accountId}/blacklists`, other.token);
    expect(gb.numbers).toEqual({ "+442079460958": {} });
  });

  it("refuses a number it cannot read, naming the key as sent, and stores nothing", async () => {
    const before = await api.call<unknown[]>("GET", base, { token, query: { paginate: "false" } });
    const res = await api.call<Record<string, Record<string, { message: string; value?: unknown }>>>("PUT", base, {
      token,
      data: { name: "bad", numbers: { "+1 415 555 267": {}, "+14155552671": {} } },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: "400", message: "validation error" });
    expect(Object.keys(res.body.data)).toEqual(["numbers.+1 415 555 267"]);
    expect(res.body.data["numbers.+1 415 555 267"]?.e164?.value).toBe("+1 415 555 267");
    const after = await api.call<unknown[]>("GET", base, { token, query: { paginate: "false" } });
    expect(after.body.data).toEqual(before.body.data);
  });

  it("defaults should_block_anonymous to false and numbers to {}, and keeps true when asked", async () => {
    const bare = await create({ name: "bare" });
    expect(bare).toMatchObject({ should_block_anonymous: false, numbers: {} });
    const strict = await create({ name: "strict", should_block_anonymous: true });
    expect(strict.should_block_anonymous).toBe(true);
  });

  it("lists rows of {id, name}", async () => {
    const list = await create({ name: "row shape", numbers: { "+14155552671": {} } });
    const res = await api.call<Record<string, unknown>[]>("GET", base, { token, query: { paginate: "false" } });
    expect(res.body.data.find((r) => r.id === list.id)).toEqual({ id: list.id, name: "row shape" });
  });

  describe("POST on the collection updates the list named by data.id", () => {
    it("replaces that list and answers it with a new revision", async () => {
      const list = await create({ name: "before", numbers: { "+14155552671": {} } });
      const res = await api.call<Record<string, unknown>>("POST", base, {
        token,
        data: { id: list.id, name: "after", numbers: { "(212) 555-0100": {} } },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual({ id: list.id, name: "after", numbers: { "+12125550100": {} }, should_block_anonymous: false });
      expect(res.body.revision).toMatch(/^2-/);
      const read = await api.call<Record<string, unknown>>("GET", `${base}/${String(list.id)}`, { token });
      expect(read.body.data).toEqual(res.body.data);
    });

    it("answers 404 bad_identifier with the id as cause when the list does not exist", async () => {
      const missing = "0".repeat(32);
      const res = await api.call("POST", base, { token, data: { id: missing, name: "ghost" } });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: missing } });
    });

    it("answers 400 naming id when data.id is missing or not a string", async () => {
      const none = await api.call<Record<string, Record<string, unknown>>>("POST", base, { token, data: { name: "who" } });
      expect(none.status).toBe(400);
      expect(none.body.data.id?.required).toBeDefined();
      const number = await api.call<Record<string, Record<string, unknown>>>("POST", base, { token, data: { id: 7, name: "who" } });
      expect(number.status).toBe(400);
      expect(number.body.data.id?.type).toBeDefined();
    });

    it("validates like any update and needs an admin", async () => {
      const list = await create({ name: "guarded" });
      const bad = await api.call<Record<string, Record<string, unknown>>>("POST", base, { token, data: { id: list.id, name: "" } });
      expect(bad.status).toBe(400);
      expect(bad.body.data.name?.minLength).toBeDefined();
      const agent = await api.login("agent1");
      const denied = await api.call("POST", base, { token: agent.token, data: { id: list.id, name: "mine now" } });
      expect(denied.status).toBe(403);
      const read = await api.call<Record<string, unknown>>("GET", `${base}/${String(list.id)}`, { token });
      expect(read.body.data.name).toBe("guarded");
    });
  });

  it("unlinks a deleted list from the account's blacklists, keeping the other links", async () => {
    const kept = await create({ name: "kept" });
    const doomed = await create({ name: "doomed" });
    const accounts = await api.server.store.global("accounts");
    const account = accounts.get(accountId);
    expect(account).toBeDefined();
    if (!account) return;
    await accounts.update(accountId, { ...account.data, blacklists: [kept.id, doomed.id] });

    const res = await api.call("DELETE", `${base}/${String(doomed.id)}`, { token });
    expect(res.status).toBe(200);
    const after = accounts.get(accountId);
    expect(after?.data.blacklists).toEqual([kept.id]);
    expect(after?.data.name).toBe(account.data.name);
  });
});
