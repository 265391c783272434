import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ManualClock } from "../../../server/clock-control.js";
import { closeOpenedStores, openStore } from "../../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-cadence-"));
});
afterEach(async () => {
  await closeOpenedStores();
  await rm(dir, { recursive: true, force: true });
});

/**
 * The newest journal generation on disk: a rewrite starts a new one at once, and every line
 * acknowledged after it goes there, so this counts rewrites begun even while they still write.
 */
async function newestGeneration(): Promise<number> {
  const names = await readdir(join(dir, "accounts", ACCOUNT));
  return Math.max(...names.filter((f) => f.endsWith(".journal")).map((f) => Number(f.split(".")[1])));
}

async function documentsInFile(): Promise<number> {
  const text = await readFile(join(dir, "accounts", ACCOUNT, "devices.json"), "utf8");
  return (JSON.parse(text) as { docs: unknown[] }).docs.length;
}

describe("collection file rewrites", () => {
  it("come after as many changes as the file held documents, so a write's share stays flat", async () => {
    // The manual clock never reaches the quiet second: only the change count starts a rewrite.
    const store = await openStore({ dir, clock: new ManualClock(Date.UTC(2026, 10, 26)) });
    const devices = await store.account(ACCOUNT, "devices");
    await Promise.all(Array.from({ length: 3_000 }, (_, i) => devices.create({ name: `d${i}` })));
    await devices.flush();
    expect(await documentsInFile()).toBe(3_000);
    // The first change after the rewrite opens the generation the next ones append to.
    await devices.create({ name: "e" });
    const generation = await newestGeneration();

    // 2,999 changes to a file of 3,000 documents: no rewrite yet (a fixed 1,000 would have made two).
    // One at a time, so a rewrite started by a change comes before the next change's line.
    for (let i = 0; i < 2_998; i++) await devices.create({ name: `e${i}` });
    expect(await newestGeneration()).toBe(generation);

    await devices.create({ name: "the 3,000th change" });
    await vi.waitFor(async () => expect(await documentsInFile()).toBe(6_000));
  });
});
