import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError } from "../../../server/http/errors.js";
import { storeError } from "../../../server/http/resource.js";
import { Store, StoreUniqueError, type UniqueIndexSpec } from "../../../server/store/index.js";
import { closeOpenedStores, openStore } from "../../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
const USERNAMES: UniqueIndexSpec = {
  field: "sip.username",
  description: "SIP username already in use",
  keys: (data) => {
    const sip = data.sip as { username?: unknown } | undefined;
    return typeof sip?.username === "string" ? [sip.username.toLowerCase()] : [];
  },
};
const NUMBERS: UniqueIndexSpec = {
  field: "numbers",
  description: "number already routed",
  keys: (data) => (Array.isArray(data.numbers) ? data.numbers.filter((n): n is string => typeof n === "string") : []),
};

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-unique-"));
});
afterEach(async () => {
  await closeOpenedStores();
  await rm(dir, { recursive: true, force: true });
});

function device(username: string) {
  return { name: username, sip: { username } };
}

async function devicesOf(store: Store) {
  const devices = await store.account(ACCOUNT, "devices");
  return { devices, index: devices.uniqueIndex(USERNAMES) };
}

describe("unique index", () => {
  it("follows creates, updates and deletes, and a rename frees the old value", async () => {
    const { devices, index } = await devicesOf(await openStore({ dir }));
    const a = await devices.create(device("Alice"));
    expect(index.holder("alice")).toBe(a.id);
    await expect(devices.create(device("ALICE"))).rejects.toBeInstanceOf(StoreUniqueError);
    expect(devices.size).toBe(1);

    await devices.update(a.id, device("Alicia"));
    expect(index.holder("alice")).toBeUndefined();
    expect(index.holder("alicia")).toBe(a.id);
    const b = await devices.create(device("alice"));
    expect(index.holder("alice")).toBe(b.id);
    // A document keeps its own value through an update.
    await devices.update(b.id, { ...device("alice"), name: "renamed" });
    await expect(devices.update(b.id, device("alicia"))).rejects.toMatchObject({ field: "sip.username", key: "alicia", holder: a.id });
    expect(devices.get(b.id)?.data.name).toBe("renamed");

    await devices.delete(a.id);
    expect(index.holder("alicia")).toBeUndefined();
    await devices.create(device("alicia"));
  });

  it("indexes every value of a many-valued field", async () => {
    const store = await openStore({ dir });
    const callflows = await store.account(ACCOUNT, "callflows");
    const index = callflows.uniqueIndex(NUMBERS);
    const a = await callflows.create({ numbers: ["100", "101"] });
    await expect(callflows.create({ numbers: ["200", "101"] })).rejects.toMatchObject({ key: "101", holder: a.id });
    await callflows.update(a.id, { numbers: ["100"] });
    expect(index.holder("101")).toBeUndefined();
    await callflows.create({ numbers: ["200", "101"] });
  });

  it("is rebuilt on open from the collection file and the journal", async () => {
    const first = await openStore({ dir });
    const devices = await first.account(ACCOUNT, "devices");
    const snapshotted = await devices.create(device("one"));
    const renamed = await devices.create(device("two"));
    await devices.flush();
    // These changes are only in the journal when the store is opened again.
    await devices.update(renamed.id, device("three"));
    const deleted = await devices.create(device("four"));
    await devices.delete(deleted.id);
    const journalled = await devices.create(device("five"));

    const { devices: again, index } = await devicesOf(await openStore({ dir }));
    expect(again).not.toBe(devices);
    expect(index.holder("one")).toBe(snapshotted.id);
    expect(index.holder("two")).toBeUndefined();
    expect(index.holder("three")).toBe(renamed.id);
    expect(index.holder("four")).toBeUndefined();
    expect(index.holder("five")).toBe(journalled.id);
    await expect(again.create(device("FIVE"))).rejects.toBeInstanceOf(StoreUniqueError);
  });

  it("lets exactly one of two concurrent creates of one value through", async () => {
    const { devices } = await devicesOf(await openStore({ dir }));
    const results = await Promise.allSettled([devices.create(device("same")), devices.create(device("Same")), devices.create(device("SAME"))]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toBeInstanceOf(StoreUniqueError);
    expect(devices.size).toBe(1);
  });

  it("reaches every collection of a declared name, opened before or after the declaration", async () => {
    const store = await openStore({ dir });
    const early = await store.account(ACCOUNT, "devices");
    await early.create(device("taken"));
    store.unique("devices", USERNAMES);
    const late = await store.account("fedcba9876543210fedcba9876543210", "devices");
    await late.create(device("taken"));
    await expect(early.create(device("taken"))).rejects.toBeInstanceOf(StoreUniqueError);
    await expect(late.create(device("taken"))).rejects.toBeInstanceOf(StoreUniqueError);
  });

  it("hands a value shared by data older than the index on to the next holder when one is deleted", async () => {
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    const a = await devices.create(device("shared"));
    const b = await devices.create(device("shared"));
    const index = devices.uniqueIndex(USERNAMES);
    expect(index.holder("shared")).toBe(a.id);
    await devices.delete(a.id);
    expect(index.holder("shared")).toBe(b.id);
    await expect(devices.create(device("shared"))).rejects.toBeInstanceOf(StoreUniqueError);
    await devices.delete(b.id);
    await devices.create(device("shared"));
  });

  it("reaches an API client as the field's unique error, as the resource's own check words it", async () => {
    const { devices } = await devicesOf(await openStore({ dir }));
    await devices.create(device("taken"));
    const refused = await devices.create(device("Taken")).catch((err: unknown) => err);
    const mapped = storeError(refused);
    expect(mapped).toBeInstanceOf(ApiError);
    expect(mapped).toMatchObject({ status: 400, data: { "sip.username": { unique: { message: "SIP username already in use", value: "taken" } } } });
  });
});
