// Store figures: 1,000 sequential creates into a collection already holding 10,000 documents
// (each awaited, so each is acknowledged on disk before the next starts), the same 1,000 issued
// at once (coalesced writes), 200 sequential durable creates (synced, as webhook attempt rows),
// the file size, and the reopen time of 100,000 documents.
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Store } from "../server/store/index.js";
import { report } from "./report.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";

function device(i: number): Record<string, unknown> {
  return {
    name: `device ${i}`,
    owner_id: "f".repeat(32),
    device_type: "softphone",
    enabled: true,
    sip: { method: "password", invite_format: "contact", registration_expiration: 300, username: `user${i}`, password: "0123456789abcdef01234567" },
    media: { audio: { codecs: ["PCMU", "PCMA"] }, video: { codecs: [] }, encryption: { enforce_security: false, methods: [] } },
    caller_id: { internal: { name: `Device ${i}`, number: String(1000 + i) } },
  };
}

async function fill(dir: string, count: number): Promise<void> {
  const store = await Store.open({ dir });
  const devices = await store.account(ACCOUNT, "devices");
  const batch = 5_000;
  for (let i = 0; i < count; i += batch) {
    await Promise.all(Array.from({ length: Math.min(batch, count - i) }, (_, j) => devices.create(device(i + j))));
  }
  await store.flush();
}

const dir = await mkdtemp(join(tmpdir(), "sb-bench-store-"));
try {
  await fill(dir, 10_000);
  const store = await Store.open({ dir });
  const devices = await store.account(ACCOUNT, "devices");
  let t = performance.now();
  for (let i = 0; i < 1_000; i++) await devices.create(device(10_000 + i));
  const sequentialS = (performance.now() - t) / 1000;
  t = performance.now();
  await Promise.all(Array.from({ length: 1_000 }, (_, i) => devices.create(device(11_000 + i))));
  const concurrentS = (performance.now() - t) / 1000;
  // The webhook attempts' path: each create synced to the disk before it is acknowledged.
  const attempts = await store.account(ACCOUNT, "webhook_attempts");
  t = performance.now();
  for (let i = 0; i < 200; i++) await attempts.create({ hook_id: "f".repeat(32), result: "failure", try: i }, { durable: true });
  const durableS = (performance.now() - t) / 1000;
  await store.flush();
  const size = (await stat(join(dir, "accounts", ACCOUNT, "devices.json"))).size;

  const big = await mkdtemp(join(tmpdir(), "sb-bench-store-big-"));
  await fill(big, 100_000);
  const bigSize = (await stat(join(big, "accounts", ACCOUNT, "devices.json"))).size;
  const reopenMs: number[] = [];
  for (let run = 0; run < 3; run++) {
    t = performance.now();
    const reopened = await Store.open({ dir: big });
    const c = await reopened.account(ACCOUNT, "devices");
    if (c.size !== 100_000) throw new Error(`reopened ${c.size} documents, expected 100000`);
    reopenMs.push(performance.now() - t);
  }
  await rm(big, { recursive: true, force: true });

  report("store", [
    ["sequential creates/s (1,000 into 10,000, each acknowledged)", (1_000 / sequentialS).toFixed(0)],
    ["concurrent creates/s (1,000 at once into 11,000, coalesced)", (1_000 / concurrentS).toFixed(0)],
    ["sequential durable creates/s (200, each synced before it is acknowledged)", (200 / durableS).toFixed(0)],
    ["file size with 12,000 documents", `${(size / 1024 / 1024).toFixed(2)} MiB`],
    ["file size with 100,000 documents", `${(bigSize / 1024 / 1024).toFixed(1)} MiB`],
    ["reopen 100,000 documents (median of 3)", `${median(reopenMs).toFixed(0)} ms`],
  ]);
} finally {
  await rm(dir, { recursive: true, force: true });
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}
