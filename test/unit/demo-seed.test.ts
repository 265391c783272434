import { createHash } from "node:crypto";
import { mkdtemp, open, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEMO_PASSWORD, HOLD_MUSIC_FILE, seedDemo } from "../../server/demo.js";
import { Store } from "../../server/store/index.js";
import { closeOpenedStores, openStore } from "../helpers/stores.js";

const assetsDir = join(import.meta.dirname, "../../assets");
const logger = pino({ level: "silent" });
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-demo-"));
});
afterEach(async () => {
  await closeOpenedStores();
  await rm(dir, { recursive: true, force: true });
});

async function counts(store: Store, accountId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const name of ["users", "devices", "callq_queues", "callflows", "media"]) out[name] = (await store.account(accountId, name)).size;
  return out;
}

describe("demo data", () => {
  it("seeds the demo account once, and a second run adds nothing", async () => {
    const store = await openStore({ dir });
    const accountId = await seedDemo(store, { assetsDir, logger });
    const first = await counts(store, accountId);
    expect(first).toEqual({ users: 5, devices: 5, callq_queues: 2, callflows: 11, media: 1 });
    const again = await openStore({ dir });
    expect(await seedDemo(again, { assetsDir, logger })).toBe(accountId);
    expect(await counts(again, accountId)).toEqual(first);
    expect((await again.global("accounts")).size).toBe(1);
  });

  it("keeps only credential hashes, gives each user a softphone with SIP credentials, and routes the numbers", async () => {
    const store = await openStore({ dir });
    const accountId = await seedDemo(store, { assetsDir, logger });
    const users = (await store.account(accountId, "users")).all();
    const agent1 = users.find((u) => u.data.username === "agent1");
    expect(agent1?.data.pvt_md5_auth).toBe(createHash("md5").update(`agent1:${DEMO_PASSWORD}`).digest("hex"));
    expect(JSON.stringify(users)).not.toContain(`"${DEMO_PASSWORD}"`);
    expect(users.find((u) => u.data.username === "admin")?.data.priv_level).toBe("admin");

    const devices = (await store.account(accountId, "devices")).all();
    for (const user of users) {
      const device = devices.find((d) => d.data.owner_id === user.id);
      const sip = device?.data.sip as { username?: string; password?: string } | undefined;
      expect(sip?.username).toBe(user.data.username);
      expect(sip?.password).toMatch(/^[0-9a-f]{24}$/);
    }

    const queues = (await store.account(accountId, "callq_queues")).all();
    expect(queues.map((q) => q.data.name).sort()).toEqual(["Sales", "Support"]);
    const agentIds = users.filter((u) => u.data.username !== "admin").map((u) => u.id).sort();
    for (const q of queues) expect(Object.keys(q.data.members as object).sort()).toEqual(agentIds);

    const callflows = (await store.account(accountId, "callflows")).all();
    const byNumber = new Map(callflows.flatMap((c) => (c.data.numbers as string[]).map((n) => [n, c.data.flow] as const)));
    expect(byNumber.get("5001")).toMatchObject({ module: "callq", data: { id: queues.find((q) => q.data.name === "Sales")?.id } });
    expect(byNumber.get("5002")).toMatchObject({ module: "callq", data: { id: queues.find((q) => q.data.name === "Support")?.id } });
    for (const n of ["1001", "1002", "1003", "1004", "1005"]) expect(byNumber.get(n)).toMatchObject({ module: "user" });
    expect(byNumber.get("*20")).toMatchObject({ module: "callq_recipient", data: { action: "login" } });
    expect(byNumber.get("*21")).toMatchObject({ data: { action: "ready" } });
    expect(byNumber.get("*22")).toMatchObject({ data: { action: "away" } });
    expect(byNumber.get("*23")).toMatchObject({ data: { action: "logout" } });

    const media = (await store.account(accountId, "media")).all();
    const hold = media[0];
    expect(hold?.attachments?.[HOLD_MUSIC_FILE]?.length).toBeGreaterThan(100_000);
    for (const q of queues) expect(q.data.hold_treatment).toBe(hold?.id);
  });

  it("makes each collection's documents together: fewer journal appends than lines, every line on disk when the seed resolves", async () => {
    // Watches the journal's appends (Node's FileHandle, which only the store's journal appends
    // with): one append a document was the seed's cost on a first start (issue 17, "Start").
    const probe = await open(join(dir, "probe"), "w");
    const handle = Object.getPrototypeOf(probe) as { appendFile: (data: string | Uint8Array, ...rest: unknown[]) => Promise<void> };
    await probe.close();
    const original = handle.appendFile;
    const appends: string[] = [];
    handle.appendFile = function (this: unknown, data: string | Uint8Array, ...rest: unknown[]) {
      appends.push(String(data));
      return original.call(this, data, ...rest);
    };
    let accountId: string;
    try {
      const store = await openStore({ dir });
      accountId = await seedDemo(store, { assetsDir, logger });
    } finally {
      handle.appendFile = original;
    }
    const lines = appends.flatMap((a) => a.split("\n").filter((l) => l !== ""));
    // The account, the hold music and its attachment, 5 users, their 5 texting numbers, 5 devices, 2 queues, 11 callflows.
    expect(lines.length).toBe(31);
    expect(appends.length).toBeLessThanOrEqual(14);
    // Every line was written before seedDemo resolved: the journals on disk hold them all.
    const journals = async (sub: string) =>
      Promise.all((await readdir(join(dir, sub))).filter((f) => f.endsWith(".journal")).map((f) => readFile(join(dir, sub, f), "utf8")));
    const onDisk = [...(await journals(".")), ...(await journals(join("accounts", accountId)))].flatMap((t) => t.split("\n").filter((l) => l !== ""));
    expect(onDisk.sort()).toEqual([...lines].sort());
  });
});
