// One rule for what audio a client may name (server/media/reference.ts), checked with the same table
// of references everywhere it is taken: a queue's hold_treatment on create, update and PATCH, and
// a simulated caller's audio. What one place accepts the others accept; what cannot be played (a
// web address, a server path, a bad tone script, media with no audio) is refused by all with the
// same 400 field error, and nothing is written or started.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let token: string;
let base: string;
let holdMusicId: string;
let noAudioId: string;

beforeAll(async () => {
  api = await startApi();
  const login = await api.login("admin");
  token = login.token;
  base = `/v2/accounts/${login.accountId}`;
  const media = await api.call<{ id: string; name: string }[]>("GET", `${base}/media`, { token });
  holdMusicId = media.body.data.find((m) => m.name === "Hold music")?.id ?? "";
  const created = await api.call<{ id: string }>("PUT", `${base}/media`, { token, data: { name: "Not uploaded yet" } });
  expect(created.status, created.text).toBe(201);
  noAudioId = created.body.data.id;
});

afterAll(async () => {
  await api.close();
});

interface Row {
  title: string;
  reference: () => string;
  /** The field error's rule, or undefined when the reference is playable. */
  rule?: "format" | "not_found" | "no_audio";
}

const TABLE: Row[] = [
  { title: "a media id with WAV audio", reference: () => holdMusicId },
  { title: "a tone script", reference: () => "tone_stream://%(400,200,440);loops=3" },
  { title: "a plain tone", reference: () => "tone_stream://440" },
  { title: "silence for a while", reference: () => "silence_stream://60000" },
  { title: "silence forever", reference: () => "silence_stream://" },
  { title: "an https address", reference: () => "https://example.com/hold.wav", rule: "format" },
  { title: "an http address", reference: () => "http://example.com/hold.mp3", rule: "format" },
  { title: "a file URL on the server", reference: () => "file:///etc/hosts", rule: "format" },
  { title: "a path on the server", reference: () => "/etc/hosts", rule: "format" },
  { title: "a media name instead of its id", reference: () => "Hold music", rule: "format" },
  { title: "a tone script that is nonsense", reference: () => "tone_stream://%(nonsense)", rule: "format" },
  { title: "a tone beyond 4 kHz", reference: () => "tone_stream://5000", rule: "format" },
  { title: "silence of no duration", reference: () => "silence_stream://soon", rule: "format" },
  { title: "an id that names no media", reference: () => "f".repeat(32), rule: "not_found" },
  { title: "media whose audio is not uploaded", reference: () => noAudioId, rule: "no_audio" },
];

function expectRefused(res: { status: number; text: string; body: { message?: string; data: unknown } }, field: string, row: Row, value: string): void {
  expect(res.status, res.text).toBe(400);
  expect(res.body.message).toBe("validation error");
  expect(res.body.data).toEqual({ [field]: { [row.rule ?? ""]: { message: expect.any(String), value } } });
}

describe("a queue's hold_treatment", () => {
  for (const row of TABLE) {
    it(`${row.rule === undefined ? "takes" : "refuses"} ${row.title} on create, update and PATCH`, async () => {
      const value = row.reference();
      const before = (await api.call<unknown[]>("GET", `${base}/callq_queues`, { token })).body.data.length;
      const created = await api.call<{ id: string; hold_treatment?: string }>("PUT", `${base}/callq_queues`, { token, data: { name: `Hold ${row.title}`, hold_treatment: value } });
      const queue = await api.call<{ id: string; name: string }>("PUT", `${base}/callq_queues`, { token, data: { name: `Plain ${row.title}` } });
      const updated = await api.call<{ hold_treatment?: string }>("POST", `${base}/callq_queues/${queue.body.data.id}`, { token, data: { name: queue.body.data.name, hold_treatment: value } });
      const patched = await api.call<{ hold_treatment?: string }>("PATCH", `${base}/callq_queues/${queue.body.data.id}`, { token, data: { hold_treatment: value } });
      if (row.rule === undefined) {
        for (const res of [created, updated, patched]) {
          expect(res.status, res.text).toBeLessThan(300);
          expect(res.body.data.hold_treatment).toBe(value);
        }
        return;
      }
      expectRefused(created, "hold_treatment", row, value);
      expectRefused(updated, "hold_treatment", row, value);
      expectRefused(patched, "hold_treatment", row, value);
      // Nothing was written: only the plain queue is new, still without hold_treatment.
      expect((await api.call<unknown[]>("GET", `${base}/callq_queues`, { token })).body.data.length).toBe(before + 1);
      expect((await api.call<Record<string, unknown>>("GET", `${base}/callq_queues/${queue.body.data.id}`, { token })).body.data).not.toHaveProperty("hold_treatment");
    });
  }
});

describe("a simulated caller's audio", () => {
  for (const row of TABLE) {
    it(`${row.rule === undefined ? "takes" : "refuses"} ${row.title}`, async () => {
      const value = row.reference();
      // An extension no callflow routes: an accepted call starts, finds no route and ends.
      const res = await api.call<{ id: string }>("POST", `${base}/sim/calls`, { token, data: { to: "9999", caller_id_number: "+14155550100", audio: value } });
      if (row.rule === undefined) {
        expect(res.status, res.text).toBe(201);
        await api.call("POST", `${base}/sim/calls/${res.body.data.id}`, { token, data: { action: "hangup" } });
        return;
      }
      expectRefused(res, "audio", row, value);
      expect((await api.call<unknown[]>("GET", `${base}/sim/calls`, { token })).body.data).toEqual([]);
    });
  }
});

describe("a callflow's media: the play module's id and uri, and callq_recipient's prompts", () => {
  let number = 8600;
  for (const row of TABLE) {
    it(`${row.rule === undefined ? "takes" : "refuses"} ${row.title}`, async () => {
      const value = row.reference();
      const before = (await api.call<unknown[]>("GET", `${base}/callflows`, { token })).body.data.length;
      const places: [string, Record<string, unknown>][] = [
        ["flow.data.id", { module: "play", data: { id: value } }],
        ["flow.data.uri", { module: "play", data: { uri: value } }],
        ["flow.data.success_media", { module: "callq_recipient", data: { action: "login", success_media: value } }],
      ];
      for (const [field, flow] of places) {
        const res = await api.call<{ id: string }>("PUT", `${base}/callflows`, { token, data: { numbers: [String(number++)], flow } });
        if (row.rule === undefined) expect(res.status, res.text).toBe(201);
        else expectRefused(res, field, row, value);
      }
      const added = row.rule === undefined ? places.length : 0;
      expect((await api.call<unknown[]>("GET", `${base}/callflows`, { token })).body.data.length).toBe(before + added);
    });
  }
});
