// Kazoo's media.md, each request example sent as written (its headers and body, curl's default
// form type where the line has `-d` and no Content-Type), checked for the documented status,
// envelope and data shape.
//
// Examples in the document: 19. Passing as documented: 11. Marked differs: 8 (system media, the
// four lines of "About Media" and "Media Languages", is not served; the file example's JSON has a
// trailing comma; prompt ids; no TTS engine; a prompt's translations as Kazoo's code lists them).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;

/** A curl line of the document against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string | Uint8Array): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

/** What `curl -d` adds when the line names no type. */
const CURL_FORM = { "Content-Type": "application/x-www-form-urlencoded" };

const media = (): string => `/v2/accounts/${accountId}/media`;

/** 8 kHz, 16-bit, mono PCM silence behind a 44-byte RIFF/WAVE header. */
function wav(samples: number): Buffer {
  const pcm = Buffer.alloc(samples * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write("WAVEfmt ", 8, "latin1");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "latin1");
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** An ID3v2 tag, then MPEG-1 layer III frames of zeros. */
function mp3(): Buffer {
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat([Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0]), frame, frame]);
}

/** A media document made the way the document's create example makes one; its id. */
async function createMedia(data: Record<string, unknown>): Promise<string> {
  const res = await curl("PUT", media(), { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data }));
  expect(res.status, res.text).toBe(201);
  return String((res.json.data as { id: string }).id);
}

/** A login's token for a demo user. */
async function tokenOf(username: string): Promise<string> {
  return (await api.login(username)).token;
}

beforeAll(async () => {
  api = await startApi();
  ({ accountId, token: admin } = await api.login("admin"));
  agent = await tokenOf("agent1");
});

afterAll(async () => {
  await api.close();
});

describe("media.md", () => {
  it("media.md › About Media [differs: system media (/v2/media) is not served]", async () => {
    const res = await curl("GET", "/v2/media", { "X-Auth-Token": admin });
    expectError(res, 404, "not_found", { message: "not found" });
  });

  for (const language of ["en", "en-US", "fr-FR"]) {
    it(`media.md › Media Languages (filter_language=${language}) [differs: system media (/v2/media) is not served]`, async () => {
      const res = await curl("GET", `/v2/media?filter_language=${language}`, { "X-Auth-Token": admin });
      expectError(res, 404, "not_found", { message: "not found" });
    });
  }

  it("media.md › Fetch", async () => {
    const id = await createMedia({ name: "Main AA BG", media_source: "tts", tts: { text: "Thank you for calling", voice: "female/en-US" } });
    const res = await curl("GET", media(), { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    const rows = res.json.data as Record<string, unknown>[];
    expect(res.json.page_size).toBe(rows.length);
    expect(rows.find((row) => row.id === id)).toEqual({ id, is_prompt: false, language: "en-us", media_source: "tts", name: "Main AA BG" });
    for (const row of rows) expect(row).toMatchObject({ id: expect.any(String), is_prompt: expect.any(Boolean), media_source: expect.any(String), name: expect.any(String) });
    // Any user of the account may list its media.
    expectSuccess(await curl("GET", media(), { "X-Auth-Token": agent }), 200);
  });

  it("media.md › Create a new media object (required before uploading the actual media data) (for a file) [differs: the example's trailing comma is not JSON, refused as Kazoo refuses it]", async () => {
    const asWritten = `{"data":{
        "streamable":true,
        "name": "File",
        "description": "My Test Media File",
        }}`;
    const res = await curl("PUT", media(), { "X-Auth-Token": admin, ...CURL_FORM }, asWritten);
    expectError(res, 400, "validation error", { json: { invalid: { message: expect.any(String) } } });
    // Without the comma the same line creates the media.
    const fixed = await curl("PUT", media(), { "X-Auth-Token": admin, ...CURL_FORM }, asWritten.replace('File",\n        }}', 'File"\n        }}'));
    expectSuccess(fixed, 201, { streamable: true, name: "File", description: "My Test Media File", media_source: "upload", language: "en-us", id: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(fixed.headers.get("location")).toBe(`${media()}/${String((fixed.json.data as { id: string }).id)}`);
    // Creating media is an admin's: an agent is refused and nothing is made.
    const before = await curl("GET", media(), { "X-Auth-Token": admin });
    expectError(await curl("PUT", media(), { "X-Auth-Token": agent, ...CURL_FORM }, `{"data":{"name":"Agent's"}}`), 403, "forbidden");
    expect((await curl("GET", media(), { "X-Auth-Token": admin })).json.data).toEqual(before.json.data);
  });

  it("media.md › Create a new media object (required before uploading the actual media data) (for a prompt) [differs: a prompt's id is an ordinary id, not language%2Fprompt_id]", async () => {
    const res = await curl(
      "PUT",
      media(),
      { "X-Auth-Token": admin, ...CURL_FORM },
      `{"data":{
        "streamable": true,
        "name": "FR-vm-enter_pass",
        "description": "FR - Enter Password prompt",
        "prompt_id": "vm-enter_pass",
        "language":"fr"
        }}`,
    );
    expectSuccess(res, 201, {
      streamable: true,
      name: "FR-vm-enter_pass",
      description: "FR - Enter Password prompt",
      prompt_id: "vm-enter_pass",
      language: "fr",
      media_source: "upload",
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
    });
    expect(res.json).toMatchObject({ auth_token: admin, request_id: expect.any(String), revision: expect.any(String) });
  });

  it("media.md › Create a new media object (required before uploading the actual media data) (for a TTS document) [differs: no TTS engine, the document is kept without audio]", async () => {
    const res = await curl(
      "PUT",
      media(),
      { "X-Auth-Token": admin, ...CURL_FORM },
      `{"data":{
        "name": "TestTTS",
        "media_source": "tts",
        "tts": {"text": "Testing TTS", "voice": "female/en-US"}
        }}`,
    );
    expectSuccess(res, 201, { name: "TestTTS", media_source: "tts", tts: { text: "Testing TTS", voice: "female/en-US" }, streamable: true, language: "en-us" });
    const id = String((res.json.data as { id: string }).id);
    expectError(await curl("GET", `${media()}/${id}/raw`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id, message: "bad identifier" });
  });

  it("media.md › Remove metadata", async () => {
    const id = await createMedia({ name: "To remove" });
    expectError(await curl("DELETE", `${media()}/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const res = await curl("DELETE", `${media()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, name: "To remove" });
    expectError(await curl("GET", `${media()}/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id });
  });

  it("media.md › Get metadata about a media file", async () => {
    const tts = {
      text: "Thank you for calling My Amazing Company where we do amazing things. You may dial any extension at any time.",
      voice: "female/en-US",
    };
    const ui = { origin: "callflows", ui: "monster-ui", version: "4.0-7" };
    const id = await createMedia({ description: "tts file", media_source: "tts", name: "Main AA BG", streamable: true, tts, ui_metadata: ui });
    const res = await curl("GET", `${media()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { description: "tts file", id, language: "en-us", media_source: "tts", name: "Main AA BG", streamable: true, tts, ui_metadata: ui });
    expect(res.json).toMatchObject({ auth_token: admin });
  });

  it("media.md › Update metadata (as written: no body, so no name)", async () => {
    const id = await createMedia({ name: "Kept", description: "before" });
    const res = await curl("POST", `${media()}/${id}`, { "X-Auth-Token": admin });
    // Kazoo replaces the document with the request's data: with none, the required name is missing.
    expectError(res, 400, "validation error", { name: { required: { message: expect.any(String) } } });
    expectSuccess(await curl("GET", `${media()}/${id}`, { "X-Auth-Token": admin }), 200, { name: "Kept", description: "before" });
    // With an envelope the same line replaces the document; an agent may not.
    const changed = await curl("POST", `${media()}/${id}`, { "X-Auth-Token": admin, ...CURL_FORM }, JSON.stringify({ data: { name: "Changed" } }));
    expectSuccess(changed, 200, { id, name: "Changed", media_source: "upload" });
    expect(changed.json.data).not.toHaveProperty("description");
    expectError(await curl("POST", `${media()}/${id}`, { "X-Auth-Token": agent, ...CURL_FORM }, JSON.stringify({ data: { name: "Agent's" } })), 403, "forbidden");
  });

  it("media.md › List all prompts and the number of translations existing", async () => {
    await createMedia({ name: "en-agent-pause", prompt_id: "agent-pause", language: "en-US" });
    await createMedia({ name: "fr-agent-pause", prompt_id: "agent-pause", language: "fr-FR" });
    await createMedia({ name: "en-agent-resume", prompt_id: "agent-resume", language: "en-US" });
    const res = await curl("GET", `${media()}/prompts`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const data = res.json.data as Record<string, number>[];
    expect(data).toHaveLength(1);
    expect(data[0]).toMatchObject({ "agent-pause": 2, "agent-resume": 1 });
    for (const count of Object.values(data[0] ?? {})) expect(count).toEqual(expect.any(Number));
  });

  it("media.md › List languages available", async () => {
    await createMedia({ name: "Danish greeting", language: "da" });
    const res = await curl("GET", `${media()}/languages`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const rows = (await curl("GET", `${media()}?paginate=false`, { "X-Auth-Token": admin })).json.data as { language?: string }[];
    const expected: Record<string, number> = {};
    for (const row of rows) {
      const key = row.language?.toLowerCase() ?? "missing";
      expected[key] = (expected[key] ?? 0) + 1;
    }
    // The demo's hold music predates languages: it is the `missing` one.
    expect(expected.missing).toBeGreaterThan(0);
    expect(res.json.data).toEqual([expected]);
    expect(expected.da).toBe(1);
  });

  it("media.md › Get the raw media file", async () => {
    const id = await createMedia({ name: "Song" });
    const audio = mp3();
    expectSuccess(await curl("POST", `${media()}/${id}/`, { "X-Auth-Token": admin, "Content-Type": "audio/mp3" }, audio), 200);
    const res = await curl("GET", `${media()}/${id}/`, { "X-Auth-Token": admin, Accept: "audio/mp3" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/mpeg");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="Song.mp3"');
    expect(res.headers.get("content-length")).toBe(String(audio.length));
    const raw = await fetch(`${api.url}${media()}/${id}/raw`, { headers: { "X-Auth-Token": admin, Accept: "audio/mp3" } });
    expect(Buffer.from(await raw.arrayBuffer())).toEqual(audio);
  });

  it("media.md › Add the media binary file to the media meta data (audio/mp3 to the document's path)", async () => {
    const id = await createMedia({ name: "Friendly", language: "en-us" });
    const audio = mp3();
    // An agent may not upload: refused before a byte is stored.
    expectError(await curl("POST", `${media()}/${id}/`, { "X-Auth-Token": agent, "Content-Type": "audio/mp3" }, audio), 403, "forbidden");
    const res = await curl("POST", `${media()}/${id}/`, { "X-Auth-Token": admin, "Content-Type": "audio/mp3" }, audio);
    expectSuccess(res, 200, { id, language: "en-us", media_source: "upload", name: "Friendly", streamable: true, content_type: "audio/mpeg", content_length: audio.length });
    expect(res.json).toMatchObject({ auth_token: admin });
    const back = await fetch(`${api.url}${media()}/${id}`, { headers: { "X-Auth-Token": admin, Accept: "audio/mpeg" } });
    expect(Buffer.from(await back.arrayBuffer())).toEqual(audio);
  });

  it("media.md › Add the media binary file to the media meta data (audio/x-wav to /raw)", async () => {
    const id = await createMedia({ name: "Wave" });
    const first = mp3();
    expectSuccess(await curl("POST", `${media()}/${id}/`, { "X-Auth-Token": admin, "Content-Type": "audio/mp3" }, first), 200);
    const audio = wav(800);
    const res = await curl("POST", `${media()}/${id}/raw`, { "X-Auth-Token": admin, "Content-Type": "audio/x-wav" }, audio);
    expectSuccess(res, 200, { id, media_source: "upload", name: "Wave", content_type: "audio/wav", content_length: audio.length });
    // "Any subsequent POSTs will overwrite the existing binary data."
    const back = await fetch(`${api.url}${media()}/${id}/raw`, { headers: { "X-Auth-Token": admin } });
    expect(back.headers.get("content-type")).toBe("audio/wav");
    expect(Buffer.from(await back.arrayBuffer())).toEqual(audio);
  });

  it("media.md › List all translations of a given prompt [differs: rows are {id, has_attachments}, as Kazoo's code answers]", async () => {
    const en = await createMedia({ name: "en-vm-enter_pin", prompt_id: "vm-enter_pin", language: "en-US" });
    const fr = await createMedia({ name: "fr-vm-enter_pin", prompt_id: "vm-enter_pin", language: "fr-FR" });
    expectSuccess(await curl("POST", `${media()}/${fr}/raw`, { "X-Auth-Token": admin, "Content-Type": "audio/x-wav" }, wav(80)), 200);
    const res = await curl("GET", `${media()}/prompts/vm-enter_pin`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: 2 });
    expect(res.json.data).toEqual(
      expect.arrayContaining([
        { id: en, has_attachments: false },
        { id: fr, has_attachments: true },
      ]),
    );
    expect(res.json.data).toHaveLength(2);
  });

  it("media.md › List media files with specific language", async () => {
    const a = await createMedia({ name: "Svenska 1", language: "sv-SE" });
    const b = await createMedia({ name: "Svenska 2", language: "sv-se" });
    const res = await curl("GET", `${media()}/languages/sv-SE`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect([...(res.json.data as string[])].sort()).toEqual([a, b].sort());
  });

  it("media.md › To get the IDs of the media docs missing a language:", async () => {
    const res = await curl("GET", `${media()}/languages/missing`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const rows = (await curl("GET", `${media()}?paginate=false`, { "X-Auth-Token": admin })).json.data as { id: string; language?: string }[];
    const missing = rows.filter((row) => row.language === undefined).map((row) => row.id);
    expect(missing.length).toBeGreaterThan(0);
    expect(res.json.data).toEqual(missing);
  });
});
