// Issue 14, item 16: SIGKILL the real serve-mode server mid-write and start it again on the same
// data directory. Whatever it acknowledged (a 2xx, a webhook attempt listed as logged, the
// audio of a call being recorded) is there afterwards.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { demoGrant, serve, type DemoGrant, type Served } from "../helpers/serve.js";
import { poll } from "../helpers/poll.js";
import { launchBrowser } from "../helpers/browser.js";
import { MEASURING_AUDIO, openPhoneLab, phoneLabDir, type LabWindow } from "../helpers/phone-page.js";
import { middleShare, readStereoWav } from "../helpers/stereo-wav.js";
import { parseWav } from "../../server/media/wav.js";

let dataDir: string;
let served: Served | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sb-crash-"));
});

afterEach(async () => {
  await served?.stop();
  served = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

function start(...args: string[]): Promise<Served> {
  return serve({ args: ["--data-dir", dataDir, "--media-workers", "0", ...args] });
}

async function call<T>(url: string, grant: DemoGrant, method: string, path: string, data?: unknown): Promise<{ status: number; body: { data: T } }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "X-Auth-Token": grant.token, ...(data === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(data === undefined ? {} : { body: JSON.stringify({ data }) }),
  });
  return { status: res.status, body: (await res.json()) as { data: T } };
}

/** A webhook receiver that answers every request 500, counting them. */
async function failingReceiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      count++;
      res.writeHead(500).end("no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    count: () => count,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe("SIGKILL during webhook retries", () => {
  it("every failure row the log listed before the kill is there after the restart", async () => {
    const receiver = await failingReceiver();
    try {
      served = await start();
      const grant = await demoGrant(served.url);
      const base = `/v2/accounts/${grant.accountId}`;
      const hook = await call<{ id: string }>(served.url, grant, "PUT", `${base}/webhooks`, {
        name: "crash hook",
        hook: "object",
        uri: `${receiver.url}/hook`,
        retries: 4,
        custom_data: { type: "device" },
      });
      expect(hook.status).toBe(201);
      expect((await call(served.url, grant, "PUT", `${base}/devices`, { name: "hooked phone" })).status).toBe(201);
      type Row = { try: number; result: string };
      const attempts = (url: string, g: DemoGrant) => call<Row[]>(url, g, "GET", `${base}/webhooks/${hook.body.data.id}/attempts`);
      const before = await poll("three failure rows", async () => {
        const rows = (await attempts(served?.url ?? "", grant)).body.data;
        return rows.length >= 3 ? rows : undefined;
      }, 30_000, 20);
      await served.kill();

      served = await start();
      const again = await demoGrant(served.url);
      const after = (await attempts(served.url, again)).body.data;
      for (const row of before) expect(after).toContainEqual(row);
    } finally {
      await receiver.close();
    }
  });
});

describe("SIGKILL during a burst of API writes", () => {
  it("every write answered 2xx is there after the restart", async () => {
    served = await start();
    const url = served.url;
    const grant = await demoGrant(url);
    const base = `/v2/accounts/${grant.accountId}`;
    const acknowledged: string[] = [];
    let killed = false;
    // Eight writers, each creating devices one after another until the server is gone.
    const writer = async (lane: number): Promise<void> => {
      for (let i = 0; !killed; i++) {
        try {
          const res = await call<{ id: string }>(url, grant, "PUT", `${base}/devices`, { name: `burst ${lane}.${i}` });
          expect(res.status).toBe(201);
          acknowledged.push(res.body.data.id);
        } catch (err) {
          if (!killed) throw err;
        }
      }
    };
    const writers = Promise.all(Array.from({ length: 8 }, (_, lane) => writer(lane)));
    await poll("300 acknowledged writes", () => (acknowledged.length >= 300 ? true : undefined), 30_000, 5);
    killed = true;
    await served.kill();
    await writers;

    served = await start();
    const again = await demoGrant(served.url);
    const res = await call<{ id: string }[]>(served.url, again, "GET", `${base}/devices?page_size=5000`);
    const present = new Set(res.body.data.map((d) => d.id));
    const lost = acknowledged.filter((id) => !present.has(id));
    expect(lost).toEqual([]);
  });
});

describe("SIGKILL during a recorded call", () => {
  const CALLER_TONE = 1200;

  it("leaves the audio up to the crash as a playable recording marked interrupted, visible as any recording", async () => {
    served = await start("--renderer-dir", await phoneLabDir());
    const grant = await demoGrant(served.url);
    const base = `/v2/accounts/${grant.accountId}`;
    const users = await call<{ id: string; username: string }[]>(served.url, grant, "GET", `${base}/users`);
    const agentId = users.body.data.find((u) => u.username === "agent1")?.id ?? "";
    expect((await call(served.url, grant, "PATCH", `${base}/users/${agentId}`, { call_recording: { inbound: { offnet: { enabled: true } } } })).status).toBe(200);
    const devices = await call<{ id: string; username?: string }[]>(served.url, grant, "GET", `${base}/devices`);
    const deviceId = devices.body.data.find((d) => d.username === "agent1")?.id ?? "";
    const device = await call<{ sip: { username: string; password: string } }>(served.url, grant, "GET", `${base}/devices/${deviceId}`);

    const browser = await launchBrowser();
    let callId = "";
    try {
      const page: Page = await openPhoneLab(browser.browser, served.url);
      await page.evaluate((o) => (globalThis as unknown as LabWindow).lab.start(o), {
        server: `${served.url.replace(/^http/, "ws")}/sip`,
        username: device.body.data.sip.username,
        password: device.body.data.sip.password,
        realm: "demo.switchboard.local",
        audio: MEASURING_AUDIO,
      });
      const sim = await call<{ id: string }>(served.url, grant, "POST", `${base}/sim/calls`, {
        to: "1002",
        caller_id_name: "Casey Customer",
        caller_id_number: "+14155550100",
        audio: `tone_stream://${CALLER_TONE}`,
      });
      expect(sim.status).toBe(201);
      callId = sim.body.data.id;
      const calls = () => page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls());
      const incoming = await poll("the call offered to agent1", async () => (await calls()).find((c) => c.state === "incoming"));
      await page.evaluate((i) => (globalThis as unknown as LabWindow).lab.phone().answer(i), incoming.id);
      await poll("the call active", async () => ((await calls()).find((c) => c.id === incoming.id)?.state === "active" ? true : undefined));
      // More than one recorder chunk (a second of audio) on disk, then the crash.
      const scratch = join(dataDir, "recordings.partial");
      await poll("two seconds of audio written", async () => {
        const wav = (await readdir(scratch)).find((n) => n.endsWith(".wav"));
        return wav && (await stat(join(scratch, wav))).size > 44 + 2 * 32_000 ? true : undefined;
      }, 20_000);
      await served.kill();
    } finally {
      await browser.close();
    }

    served = await start();
    const after = await demoGrant(served.url);
    const list = await call<Record<string, unknown>[]>(served.url, after, "GET", `${base}/recordings?filter_call_id=${callId}`);
    expect(list.body.data).toHaveLength(1);
    const row = list.body.data[0] ?? {};
    expect(row).toMatchObject({ call_id: callId, interrupted: true, owner_id: agentId, caller_id_name: "Casey Customer", content_type: "audio/wav" });
    expect(Number(row.duration_ms)).toBeGreaterThanOrEqual(2000);
    const audio = await fetch(`${served.url}${base}/recordings/${String(row.id)}?accept=audio/wav`, { headers: { "X-Auth-Token": after.token } });
    expect(audio.status).toBe(200);
    const bytes = Buffer.from(await audio.arrayBuffer());
    // A valid header: its sizes are the file's, not the zeros a recorder leaves while it runs.
    const header = parseWav(bytes);
    expect(header).toMatchObject({ formatCode: 1, channels: 2, sampleRate: 8000, bitsPerSample: 16, dataOffset: 44, riffSize: bytes.length - 8 });
    expect(bytes.readUInt32LE(40)).toBe(bytes.length - 44);
    const wav = readStereoWav(bytes);
    expect(wav.left.length).toBe((Number(row.duration_ms) * 8000) / 1000);
    expect(middleShare(wav.left, CALLER_TONE), "left: the customer's tone").toBeGreaterThan(0.5);
    // Seen as any recording: the agent who took the call reads it, another agent does not.
    const agent1 = await demoGrant(served.url, "agent1");
    expect((await call(served.url, agent1, "GET", `${base}/recordings/${String(row.id)}`)).status).toBe(200);
    const agent2 = await demoGrant(served.url, "agent2");
    expect((await call(served.url, agent2, "GET", `${base}/recordings/${String(row.id)}`)).status).toBe(403);
    // Nothing is left in the scratch folder to be stored twice.
    expect(await readdir(join(dataDir, "recordings.partial"))).toEqual([]);
    // And the audio, like everything else in the data directory, is its owner's alone.
    const audioFile = join(dataDir, "accounts", grant.accountId, "recordings.attachments", String(row.id), "call_recording.wav");
    expect(((await stat(audioFile)).mode & 0o777).toString(8)).toBe("600");
  });
});
