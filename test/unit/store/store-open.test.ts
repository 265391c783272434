// The store finds an open collection by its key alone (asked on most requests); what it refuses
// when opening it still refuses, and a global collection and an account's of the same name stay apart.
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { Store } from "../../../server/store/index.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
let dir: string;
let store: Store;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-store-open-"));
  store = await Store.open({ dir });
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

it("answers the same collection each time it is asked, kept apart by account and from the global one", async () => {
  const devices = await store.account(ACCOUNT, "devices");
  expect(await store.account(ACCOUNT, "devices")).toBe(devices);
  const other = await store.account("f".repeat(32), "devices");
  expect(other).not.toBe(devices);
  const global = await store.global("devices");
  expect(global).not.toBe(devices);
  expect(await store.global("devices")).toBe(global);
  await devices.create({ name: "mine" });
  expect(other.size).toBe(0);
  expect(global.size).toBe(0);
});

it("refuses a bad account id or collection name, before and after others are open", async () => {
  const ask = (): (() => unknown)[] => [
    () => store.account("../etc", "devices"),
    () => store.account(ACCOUNT.toUpperCase(), "devices"),
    () => store.account(ACCOUNT, "../devices"),
    () => store.account(`${ACCOUNT}/x`, "devices"),
    () => store.global("accounts/x"),
  ];
  for (const bad of ask()) expect(bad).toThrow(/store: bad/);
  await store.account(ACCOUNT, "devices");
  await store.global("accounts");
  for (const bad of ask()) expect(bad).toThrow(/store: bad/);
});

it("opens a collection again after its open failed, rather than answering the failure kept", async () => {
  // A directory where the collection's file belongs: its open fails.
  const file = join(dir, "accounts", ACCOUNT, "devices.json");
  await mkdir(file, { recursive: true });
  await expect(store.account(ACCOUNT, "devices")).rejects.toThrow();
  // Let the failed open's promise drop its entry (its rejection handler runs a turn later).
  await new Promise((resolve) => setImmediate(resolve));
  await rm(file, { recursive: true });
  const devices = await store.account(ACCOUNT, "devices");
  await devices.create({ name: "mine" });
  expect(await store.account(ACCOUNT, "devices")).toBe(devices);
  expect(devices.size).toBe(1);
});
