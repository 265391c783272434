import { fork } from "node:child_process";
import { pbkdf2 } from "node:crypto";
import { appendFile, mkdtemp, readFile, readdir, readlink, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GREGORIAN_OFFSET_S } from "../../../server/clock.js";
import { ManualClock } from "../../../server/clock-control.js";
import { MODB_ID_PATTERN, REVISION_PATTERN, Store, StoreConflictError, StoreNotFoundError } from "../../../server/store/index.js";
import { closeOpenedStores, openStore } from "../../helpers/stores.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";
let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-store-"));
});
afterEach(async () => {
  await closeOpenedStores();
  await rm(dir, { recursive: true, force: true });
});

async function reopenAs(name: string) {
  const store = await openStore({ dir });
  return store.account(ACCOUNT, name);
}

async function reopen() {
  const store = await openStore({ dir });
  return store.account(ACCOUNT, "devices");
}

describe("collection", () => {
  it("stamps ids, Gregorian times and a revision that changes on every write", async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const store = await openStore({ dir, clock });
    const devices = await store.account(ACCOUNT, "devices");
    const doc = await devices.create({ name: "desk" });
    expect(doc.id).toMatch(/^[0-9a-f]{32}$/);
    expect(doc.rev).toMatch(REVISION_PATTERN);
    expect(doc.rev.startsWith("1-")).toBe(true);
    expect(doc.created).toBe(Date.UTC(2026, 10, 21, 12, 0, 0) / 1000 + GREGORIAN_OFFSET_S);
    const updated = await devices.update(doc.id, { name: "desk 2" });
    expect(updated.rev.startsWith("2-")).toBe(true);
    expect(updated.rev).not.toBe(doc.rev);
    const recordings = await store.account(ACCOUNT, "recordings");
    const rec = await recordings.create({ name: "r" }, { modb: true });
    expect(rec.id).toMatch(MODB_ID_PATTERN);
    expect(rec.id.startsWith("202611-")).toBe(true);
  });

  it("keeps every one of many concurrent writes", async () => {
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    const created = await Promise.all(Array.from({ length: 500 }, (_, i) => devices.create({ name: `d${i}` })));
    await Promise.all(created.slice(0, 250).map((d) => devices.update(d.id, { name: `${String(d.data.name)}!` })));
    await Promise.all(created.slice(450).map((d) => devices.delete(d.id)));
    const again = await reopen();
    expect(again.size).toBe(450);
    for (const d of created.slice(0, 250)) expect(again.get(d.id)?.data.name).toBe(`${String(d.data.name)}!`);
    for (const d of created.slice(250, 450)) expect(again.get(d.id)?.data.name).toBe(d.data.name);
    for (const d of created.slice(450)) expect(again.has(d.id)).toBe(false);
  });

  it("refuses a write with a stale revision and changes nothing", async () => {
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    const doc = await devices.create({ name: "a" });
    const v2 = await devices.update(doc.id, { name: "b" }, { rev: doc.rev });
    await expect(devices.update(doc.id, { name: "c" }, { rev: doc.rev })).rejects.toBeInstanceOf(StoreConflictError);
    await expect(devices.delete(doc.id, { rev: doc.rev })).rejects.toBeInstanceOf(StoreConflictError);
    expect(devices.get(doc.id)?.data.name).toBe("b");
    expect(devices.get(doc.id)?.rev).toBe(v2.rev);
    await expect(devices.update("f".repeat(32), { name: "x" })).rejects.toBeInstanceOf(StoreNotFoundError);
    await expect(devices.create({ name: "dup" }, { id: doc.id })).rejects.toBeInstanceOf(StoreConflictError);
    expect((await reopen()).get(doc.id)?.data.name).toBe("b");
  });

  it("returns copies: changing what a caller passed in or got back does not change the store", async () => {
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    const input = { name: "a", sip: { username: "u" } };
    const doc = await devices.create(input);
    input.sip.username = "changed";
    expect((devices.get(doc.id)?.data.sip as { username: string }).username).toBe("u");
  });

  it.runIf(process.platform === "linux")("keeps the journal open while writing and leaves no file open once flushed", async () => {
    const journalsOpen = async (): Promise<number> => {
      const links = await Promise.all((await readdir("/proc/self/fd")).map((fd) => readlink(`/proc/self/fd/${fd}`).catch(() => "")));
      return links.filter((l) => l.startsWith(dir) && l.endsWith(".journal")).length;
    };
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    for (let i = 0; i < 5; i++) await devices.create({ name: `d${i}` });
    expect(await journalsOpen()).toBe(1);
    await store.close();
    expect(await journalsOpen()).toBe(0);
    const again = await (await openStore({ dir })).account(ACCOUNT, "devices");
    expect(again.size).toBe(5);
  });

  it("creates a document together with its attachment: nobody sees one without the other", async () => {
    const store = await openStore({ dir });
    const recordings = await store.account(ACCOUNT, "recordings");
    const seen: (string | undefined)[] = [];
    store.onChange((change) => seen.push(change.doc.attachments?.["audio.wav"]?.content_type));
    const bytes = Buffer.alloc(5_000, 7);
    const doc = await recordings.create({ name: "call" }, { modb: true, attachment: { name: "audio.wav", content: Readable.from([bytes]), contentType: "audio/wav" } });
    expect(doc.id).toMatch(MODB_ID_PATTERN);
    expect(doc.rev.startsWith("1-")).toBe(true);
    expect(doc.attachments).toEqual({ "audio.wav": { content_type: "audio/wav", length: 5_000 } });
    expect(seen).toEqual(["audio/wav"]);
    const onDisk = await readFile(join(dir, "accounts", ACCOUNT, "recordings.attachments", doc.id, "audio.wav"));
    expect(onDisk.equals(bytes)).toBe(true);
    await store.close();
    const again = await (await openStore({ dir })).account(ACCOUNT, "recordings");
    expect(again.get(doc.id)?.attachments?.["audio.wav"]?.length).toBe(5_000);
  });

  it("stores attachments as files beside the collection, streams ranges, removes them with the document", async () => {
    const store = await openStore({ dir });
    const media = await store.account(ACCOUNT, "media");
    const doc = await media.create({ name: "tone" });
    const bytes = Buffer.from(Array.from({ length: 100_000 }, (_, i) => i % 251));
    const withFile = await media.putAttachment(doc.id, "tone.wav", Readable.from([bytes.subarray(0, 40_000), bytes.subarray(40_000)]), "audio/wav");
    expect(withFile.attachments?.["tone.wav"]).toEqual({ content_type: "audio/wav", length: 100_000 });
    expect(withFile.rev.startsWith("2-")).toBe(true);
    const onDisk = await readFile(join(dir, "accounts", ACCOUNT, "media.attachments", doc.id, "tone.wav"));
    expect(onDisk.equals(bytes)).toBe(true);
    await store.flush();
    const json = await readFile(join(dir, "accounts", ACCOUNT, "media.json"), "utf8");
    expect(json.length).toBeLessThan(2_000); // never base64 inside the JSON

    const { stream } = media.readAttachment(doc.id, "tone.wav", { start: 10, end: 19 });
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).equals(bytes.subarray(10, 20))).toBe(true);

    await media.delete(doc.id);
    expect(await readdir(join(dir, "accounts", ACCOUNT, "media.attachments"))).toEqual([]);
    expect(() => media.readAttachment(doc.id, "tone.wav")).toThrow(StoreNotFoundError);
  });

  it("leaves no temp file behind when an attachment's bytes are refused before its file is open", async () => {
    const store = await openStore({ dir });
    const media = await store.account(ACCOUNT, "media");
    const doc = await media.create({ name: "impostor" });
    let refused = 0;
    for (let i = 0; i < 400; i++) {
      // The file system's thread pool kept busy, so the temp file's open is still pending when the
      // upload fails (an upload refused by its first bytes: test/api/media's wrong magic).
      for (let k = 0; k < 3; k++) pbkdf2("p", "s", 2_000, 32, "sha256", () => undefined);
      const wrong = new Readable({
        read() {
          this.destroy(new Error("not audio"));
        },
      });
      await media.putAttachment(doc.id, "audio.wav", wrong, "audio/wav").catch(() => refused++);
    }
    expect(refused).toBe(400);
    // Every job the pool was given before this one has run (its queue is first in, first out):
    // an open still pending at a refusal has created its file by now.
    await new Promise((resolve) => pbkdf2("p", "s", 1, 32, "sha256", resolve));
    expect(await readdir(join(dir, "accounts", ACCOUNT, "media.attachments", doc.id))).toEqual([]);
    expect(media.get(doc.id)?.attachments).toBeUndefined();
  });

  it("folds the journal into the collection file on flush, and keeps both consistent", async () => {
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    const docs = [];
    for (let i = 0; i < 30; i++) docs.push(await devices.create({ name: `d${i}` }));
    const folder = join(dir, "accounts", ACCOUNT);
    expect((await readdir(folder)).some((f) => f.endsWith(".journal"))).toBe(true);
    await store.flush();
    const file = JSON.parse(await readFile(join(folder, "devices.json"), "utf8")) as { docs: { id: string }[]; journal_gen: number };
    expect(file.docs.map((d) => d.id)).toEqual(docs.map((d) => d.id));
    // What is left of the journal is older than the file (kept for recovering from the previous copy).
    const generations = (await readdir(folder)).filter((f) => f.endsWith(".journal")).map((f) => Number(f.split(".")[1]));
    for (const g of generations) expect(g).toBeLessThan(file.journal_gen);
  });

  it("ignores a torn last journal line (a write cut by a crash, never acknowledged)", async () => {
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    const kept = await devices.create({ name: "kept" });
    const folder = join(dir, "accounts", ACCOUNT);
    const journal = (await readdir(folder)).find((f) => f.endsWith(".journal")) ?? "";
    await appendFile(join(folder, journal), '{"put":{"id":"abc","rev":"1-');
    const again = await reopen();
    expect(again.size).toBe(1);
    expect(again.get(kept.id)?.data.name).toBe("kept");
    const next = await again.create({ name: "next" });
    expect((await reopen()).has(next.id)).toBe(true);
  });

  it("shows a durable create only once it is synced, while counting it and keeping its id taken", async () => {
    const store = await openStore({ dir });
    const log = await store.account(ACCOUNT, "webhook_attempts");
    const writing = log.create({ n: 1 }, { durable: true, id: "a".repeat(32) });
    expect(log.all()).toEqual([]);
    expect(log.has("a".repeat(32))).toBe(false);
    expect(log.size).toBe(1);
    await expect(log.create({ n: 2 }, { id: "a".repeat(32) })).rejects.toBeInstanceOf(StoreConflictError);
    const doc = await writing;
    expect(log.all()).toEqual([doc]);
    expect(log.sortedBy((d) => d.id).map((r) => r.row)).toEqual([doc]);
    expect((await reopenAs("webhook_attempts")).get(doc.id)?.data).toEqual({ n: 1 });
  });

  it("rejects bad account ids and collection names", async () => {
    const store = await openStore({ dir });
    expect(() => store.account("../etc", "devices")).toThrow(/bad account id/);
    expect(() => store.account(ACCOUNT, "../../x")).toThrow(/bad collection name/);
  });

  it("survives SIGKILL in the middle of a burst of writes with every acknowledged write", async () => {
    const acked: string[] = [];
    const child = fork(join(import.meta.dirname, "../../fixtures/store-writer.ts"), [dir], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_code, signal) => resolve(signal)));
    await new Promise<void>((resolve) => {
      child.on("message", (m: { acked?: string }) => {
        if (m.acked) acked.push(m.acked);
        // Kill while four writers are mid-burst: at least 300 acknowledged.
        if (acked.length === 300) {
          child.kill("SIGKILL");
          resolve();
        }
      });
    });
    expect(await exited).toBe("SIGKILL");
    const store = await openStore({ dir });
    const devices = await store.account(ACCOUNT, "devices");
    for (const id of acked) expect(devices.has(id)).toBe(true);
    expect(devices.size).toBeGreaterThanOrEqual(acked.length);
    // The file on disk is whole JSON, and the store keeps working on top of it.
    JSON.parse(await readFile(join(dir, "accounts", ACCOUNT, "devices.json"), "utf8"));
    const more = await devices.create({ name: "after the crash" });
    // A clean stop before the next open: a second store on the directory while this one still
    // rewrites its file in the background raced it for the file's rename (ENOENT, seen under load).
    await store.close();
    expect((await reopen()).has(more.id)).toBe(true);
  });
});

describe("data directory lock", () => {
  it("refuses a data directory held by another live process, and takes over a dead one's", async () => {
    const child = fork(join(import.meta.dirname, "../../fixtures/store-writer.ts"), [dir], {
      execArgv: ["--import", "tsx"],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    await new Promise<void>((resolve) => child.once("message", () => resolve()));
    await expect(Store.open({ dir })).rejects.toThrow(/in use by another Switchboard server \(process \d+ on /);
    child.kill("SIGKILL");
    await new Promise((resolve) => child.once("exit", resolve));
    const store = await openStore({ dir });
    await store.close();
  });
});
