import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { ASSETS_DIR, createAccount, startApi, type TestApi } from "../helpers/api.js";

describeConformance({
  name: "media",
  field: "name",
  adminWrites: true,
  valid: (n) => ({ name: `prompt ${n}`, description: `greeting number ${n}`, language: "en-us" }),
  invalid: [
    { title: "a missing name", data: { description: "nameless" }, field: "name", rule: "required" },
    { title: "an empty name", data: { name: "" }, field: "name", rule: "minLength" },
    { title: "a name over 128 characters", data: { name: "x".repeat(129) }, field: "name", rule: "maxLength" },
    { title: "an unknown media_source", data: { name: "m", media_source: "fax" }, field: "media_source", rule: "enum" },
    { title: "a non-boolean streamable", data: { name: "m", streamable: "yes" }, field: "streamable", rule: "type" },
    { title: "a language that is not a locale", data: { name: "m", language: "english please" }, field: "language", rule: "pattern" },
    { title: "tts without its text", data: { name: "m", media_source: "tts", tts: { voice: "female/en-US" } }, field: "tts.text", rule: "required" },
    { title: "tts text that is not a string", data: { name: "m", tts: { text: 42 } }, field: "tts.text", rule: "type" },
  ],
});

/** 8 kHz, 16-bit, mono PCM: a 44-byte RIFF/WAVE header and a 440 Hz tone. */
function makeWav(samples: number): Buffer {
  const pcm = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 8000)), i * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0, "latin1");
  header.writeUInt32LE(36 + pcm.length, 4);
  header.write("WAVE", 8, "latin1");
  header.write("fmt ", 12, "latin1");
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(16000, 28); // byte rate
  header.writeUInt16LE(2, 32); // block align
  header.writeUInt16LE(16, 34);
  header.write("data", 36, "latin1");
  header.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([header, pcm]);
}

/** An ID3v2 tag, then MPEG-1 layer III frames (sync 0xFFFB) of noise-free zeros. */
function makeMp3(): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]);
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0x64]);
  return Buffer.concat([id3, frame, frame, frame]);
}

interface Media {
  id: string;
  name: string;
  media_source?: string;
  streamable?: boolean;
  content_type?: string;
  content_length?: number;
}

type Errors = Record<string, Record<string, { message: string; value?: unknown }>>;

describe("media: audio upload and download", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let base: string;
  const wav = makeWav(4000);

  beforeAll(async () => {
    api = await startApi();
    ({ token, accountId } = await api.login("admin"));
    base = `/v2/accounts/${accountId}/media`;
  });
  afterAll(async () => {
    await api.close();
  });

  const newMedia = async (name: string): Promise<string> => {
    const res = await api.call<Media>("PUT", base, { token, data: { name } });
    expect(res.status, res.text).toBe(201);
    return res.body.data.id;
  };

  const upload = (id: string, body: Buffer, contentType: string, headers: Record<string, string> = {}) =>
    api.call<Media>("POST", `${base}/${id}/raw`, { token, body, headers: { "Content-Type": contentType, ...headers } });

  /** A download read as bytes, which the JSON helper cannot do. */
  const download = async (path: string, options: { headers?: Record<string, string>; query?: Record<string, string>; token?: string } = {}) => {
    const url = new URL(path, api.url);
    for (const [k, v] of Object.entries(options.query ?? {})) url.searchParams.set(k, v);
    const res = await fetch(url, { headers: { "X-Auth-Token": options.token ?? token, ...options.headers } });
    return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  const filesOf = async (id: string): Promise<string[]> => {
    const dir = join(api.dataDir, "accounts", accountId, "media.attachments", id);
    return existsSync(dir) ? readdir(dir) : [];
  };

  it("fills the defaults, and ignores a content_type or length the client makes up", async () => {
    const res = await api.call<Media>("PUT", base, { token, data: { name: "bare", content_type: "audio/mpeg", content_length: 5 } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ name: "bare", media_source: "upload", streamable: true });
    expect(res.body.data).not.toHaveProperty("content_type");
    expect(res.body.data).not.toHaveProperty("content_length");
  });

  it("answers 404 bad_identifier for the audio of a media that has none yet, or of no media", async () => {
    const id = await newMedia("silent");
    const none = await api.call("GET", `${base}/${id}/raw`, { token });
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ message: "bad_identifier", data: { cause: id } });
    const missing = "0".repeat(32);
    expect((await api.call("GET", `${base}/${missing}/raw`, { token })).body).toMatchObject({ message: "bad_identifier", data: { cause: missing } });
    expect((await upload(missing, wav, "audio/wav")).status).toBe(404);
  });

  it("streams the audio from the document's own path when the client asks for audio (header or accept=)", async () => {
    const id = await newMedia("By accept");
    expect((await upload(id, wav, "audio/wav")).status).toBe(200);
    const byHeader = await download(`${base}/${id}`, { headers: { Accept: "audio/wav" } });
    expect(byHeader.status).toBe(200);
    expect(byHeader.headers.get("content-type")).toContain("audio/wav");
    expect(byHeader.bytes.equals(wav)).toBe(true);
    const byQuery = await download(`${base}/${id}`, { query: { accept: "audio/wav" }, headers: { Range: "bytes=0-99" } });
    expect(byQuery.status).toBe(206);
    expect(byQuery.bytes.equals(wav.subarray(0, 100))).toBe(true);
    const json = await api.call<Media>("GET", `${base}/${id}`, { token });
    expect(json.body.data.id).toBe(id);
  });

  it("stores an uploaded WAV and answers the document with its content_type and length", async () => {
    const id = await newMedia("Welcome");
    const res = await upload(id, wav, "audio/wav");
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id, name: "Welcome", content_type: "audio/wav", content_length: wav.length });
    const read = await api.call<Media>("GET", `${base}/${id}`, { token });
    expect(read.body.data).toEqual(res.body.data);
    const rows = await api.call<Media[]>("GET", base, { token, query: { paginate: "false" } });
    const row = rows.body.data.find((r) => r.id === id);
    expect(row).toEqual({ id, name: "Welcome", media_source: "upload", content_type: "audio/wav", is_prompt: false, language: "en-us" });
    expect(await filesOf(id)).toEqual(["media.wav"]);
  });

  it("downloads the exact bytes with Content-Type, Content-Length, Accept-Ranges and a filename", async () => {
    const id = await newMedia("Greeting");
    await upload(id, wav, "audio/x-wav");
    const res = await download(`${base}/${id}/raw`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/wav");
    expect(res.headers.get("content-length")).toBe(String(wav.length));
    expect(res.headers.get("accept-ranges")).toBe("bytes");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="Greeting.wav"');
    expect(res.bytes.equals(wav)).toBe(true);
    const inline = await download(`${base}/${id}/raw`, { query: { inline: "true" } });
    expect(inline.headers.get("content-disposition")).toMatch(/^inline/);
    expect(inline.bytes.equals(wav)).toBe(true);
  });

  it("honours Range: the first 100 bytes, a middle span, a suffix, and 416 past the end", async () => {
    const id = await newMedia("Ranged");
    await upload(id, wav, "audio/wav");
    const size = wav.length;
    const part = (range: string) => download(`${base}/${id}/raw`, { headers: { Range: range } });

    const first = await part("bytes=0-99");
    expect(first.status).toBe(206);
    expect(first.headers.get("content-range")).toBe(`bytes 0-99/${size}`);
    expect(first.headers.get("content-length")).toBe("100");
    expect(first.bytes.equals(wav.subarray(0, 100))).toBe(true);

    const middle = await part("bytes=1000-2999");
    expect(middle.status).toBe(206);
    expect(middle.headers.get("content-range")).toBe(`bytes 1000-2999/${size}`);
    expect(middle.bytes.equals(wav.subarray(1000, 3000))).toBe(true);

    const suffix = await part("bytes=-10");
    expect(suffix.status).toBe(206);
    expect(suffix.headers.get("content-range")).toBe(`bytes ${size - 10}-${size - 1}/${size}`);
    expect(suffix.bytes.equals(wav.subarray(size - 10))).toBe(true);

    const rest = await part(`bytes=${size - 4}-`);
    expect(rest.bytes.equals(wav.subarray(size - 4))).toBe(true);

    const beyond = await part(`bytes=${size}-`);
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("content-range")).toBe(`bytes */${size}`);
    expect(beyond.bytes.length).toBe(0);

    // A Range it will not serve (several spans) is ignored: the whole file, 200.
    const several = await part("bytes=0-9,20-29");
    expect(several.status).toBe(200);
    expect(several.bytes.equals(wav)).toBe(true);

    // If-Range with the current ETag keeps the range; with an old one, the whole file.
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"\d+-[0-9a-f]{32}"$/);
    expect((await download(`${base}/${id}/raw`, { headers: { Range: "bytes=0-9", "If-Range": etag } })).status).toBe(206);
    const stale = await download(`${base}/${id}/raw`, { headers: { Range: "bytes=0-9", "If-Range": '"1-00000000000000000000000000000000"' } });
    expect(stale.status).toBe(200);
    expect(stale.bytes.length).toBe(size);
  });

  it("streams the audio whatever Accept the client sends, as a header or as accept= in the query", async () => {
    const id = await newMedia("Accepting");
    await upload(id, wav, "audio/wav");
    for (const options of [{ headers: { Accept: "audio/*" } }, { query: { accept: "audio/wav" } }, { headers: { Accept: "audio/wav" }, query: { accept: "audio/wav" } }]) {
      const res = await download(`${base}/${id}/raw`, options);
      expect(res.status, JSON.stringify(options)).toBe(200);
      expect(res.headers.get("content-type")).toBe("audio/wav");
      expect(res.bytes.equals(wav)).toBe(true);
    }
  });

  it("takes MP3 (ID3 tag or bare frame sync) under audio/mpeg and audio/mp3, replacing the WAV", async () => {
    const id = await newMedia("Jingle");
    await upload(id, wav, "audio/wav");
    const mp3 = makeMp3();
    const res = await upload(id, mp3, "audio/mpeg");
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ content_type: "audio/mpeg", content_length: mp3.length });
    expect(await filesOf(id)).toEqual(["media.mp3"]);
    const got = await download(`${base}/${id}/raw`);
    expect(got.headers.get("content-type")).toBe("audio/mpeg");
    expect(got.headers.get("content-disposition")).toBe('attachment; filename="Jingle.mp3"');
    expect(got.bytes.equals(mp3)).toBe(true);

    const bare = mp3.subarray(10);
    const alias = await upload(id, bare, "audio/mp3");
    expect(alias.status, alias.text).toBe(200);
    expect((await download(`${base}/${id}/raw`)).bytes.equals(bare)).toBe(true);
  });

  it("refuses bytes that are not what the Content-Type says, keeping nothing", async () => {
    const id = await newMedia("Impostor");
    const before = await api.call<Media>("GET", `${base}/${id}`, { token });
    for (const [body, type] of [
      [Buffer.from("hello, this is not audio at all"), "audio/wav"],
      [makeMp3(), "audio/wav"],
      [wav, "audio/mpeg"],
      [Buffer.alloc(0), "audio/wav"],
      [Buffer.from("RIFF"), "audio/wav"],
    ] as const) {
      const res = await upload(id, body, type);
      expect(res.status, `${type} ${body.subarray(0, 4).toString("latin1")}`).toBe(400);
      expect(res.body).toMatchObject({ message: "invalid data", data: { content_type: { magic: { value: type === "audio/wav" ? "audio/wav" : "audio/mpeg" } } } });
    }
    const after = await api.call<Media>("GET", `${base}/${id}`, { token });
    expect(after.body.revision).toBe(before.body.revision);
    expect(await filesOf(id)).toEqual([]);
    expect((await api.call("GET", `${base}/${id}/raw`, { token })).status).toBe(404);
  });

  it("refuses content types it does not store with a 400 naming content_type", async () => {
    const id = await newMedia("Ogg");
    for (const type of ["audio/ogg", "text/plain", "application/octet-stream"]) {
      const res = await api.call<Errors>("POST", `${base}/${id}/raw`, { token, body: wav, headers: { "Content-Type": type } });
      expect(res.status, type).toBe(400);
      expect(res.body.data.content_type?.enum?.message, type).toContain("audio/wav");
    }
    const json = await api.call<Errors>("POST", `${base}/${id}/raw`, { token, data: { audio: "base64?" } });
    expect(json.status).toBe(400);
    expect(json.body.data.content_type).toBeDefined();
  });

  it("takes base64 (application/base64, application/x-base64) as Kazoo does: a data URI names the type, bare bytes are sniffed", async () => {
    const id = await newMedia("Base64");
    const mp3 = makeMp3();
    const asUri = await upload(id, Buffer.from(`data:audio/mp3;base64,${mp3.toString("base64")}`), "application/base64");
    expect(asUri.status, asUri.text).toBe(200);
    expect(asUri.body.data).toMatchObject({ content_type: "audio/mpeg", content_length: mp3.length });
    expect((await download(`${base}/${id}/raw`)).bytes.equals(mp3)).toBe(true);
    // Bare base64, wrapped as MIME does it, under the x- spelling: the RIFF header says WAV.
    const wrapped = (wav.toString("base64").match(/.{1,76}/g) ?? []).join("\r\n");
    const bare = await upload(id, Buffer.from(wrapped), "application/x-base64");
    expect(bare.status, bare.text).toBe(200);
    expect(bare.body.data).toMatchObject({ content_type: "audio/wav", content_length: wav.length });
    const back = await download(`${base}/${id}/raw`);
    expect(back.headers.get("content-type")).toBe("audio/wav");
    expect(back.bytes.equals(wav)).toBe(true);
    expect(await filesOf(id)).toEqual(["media.wav"]);
  });

  it("refuses base64 it cannot decode or play with a 400, keeping the audio it had", async () => {
    const id = await newMedia("Bad base64");
    expect((await upload(id, wav, "audio/wav")).status).toBe(200);
    const before = await api.call<Media>("GET", `${base}/${id}`, { token });
    const cases: { body: string; field: string; rule: string }[] = [
      { body: "not base64 at all!", field: "file", rule: "encoding" },
      { body: `data:audio/wav,${wav.toString("base64")}`, field: "file", rule: "encoding" },
      { body: `data:audio/ogg;base64,${wav.toString("base64")}`, field: "content_type", rule: "enum" },
      { body: Buffer.from("plain text, not audio").toString("base64"), field: "content_type", rule: "enum" },
      { body: `data:audio/mpeg;base64,${wav.toString("base64")}`, field: "content_type", rule: "magic" },
    ];
    for (const { body, field, rule } of cases) {
      const res = await upload(id, Buffer.from(body), "application/base64");
      expect(res.status, body.slice(0, 40)).toBe(400);
      expect((res.body.data as unknown as Errors)[field]?.[rule], body.slice(0, 40)).toBeDefined();
    }
    const after = await api.call<Media>("GET", `${base}/${id}`, { token });
    expect(after.body.revision).toBe(before.body.revision);
    expect((await download(`${base}/${id}/raw`)).bytes.equals(wav)).toBe(true);
    // Elsewhere base64 is no envelope.
    const elsewhere = await api.call("PUT", base, { token, body: "e30=", headers: { "Content-Type": "application/base64" } });
    expect(elsewhere.status).toBe(415);
  });

  it("takes the audio POSTed to the document's own path, and answers other non-JSON bodies there 415", async () => {
    const id = await newMedia("Own path");
    const res = await api.call<Media>("POST", `${base}/${id}`, { token, body: wav, headers: { "Content-Type": "audio/x-wav" } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ name: "Own path", content_type: "audio/wav", content_length: wav.length });
    const before = await api.call<Media>("GET", `${base}/${id}`, { token });
    const refused = await api.call<Errors>("POST", `${base}/${id}`, { token, body: '{"data":{"name":"Renamed"}}', headers: { "Content-Type": "text/plain" } });
    expect(refused.status).toBe(415);
    expect(refused.body).toMatchObject({ message: "unsupported_media_type", data: { content_type: { type: { value: "text/plain" } } } });
    expect((await api.call("POST", `${base}/${id}`, { token, body: wav, headers: { "Content-Type": "audio/ogg" } })).status).toBe(400);
    expect((await api.call<Media>("GET", `${base}/${id}`, { token })).body.revision).toBe(before.body.revision);
    expect((await download(`${base}/${id}/raw`)).bytes.equals(wav)).toBe(true);
  });

  it("refuses an upload over 20 MiB with 413 and keeps no file, whether or not it declared its length", async () => {
    const id = await newMedia("Too long");
    const big = Buffer.concat([wav.subarray(0, 44), Buffer.alloc(20 * 1024 * 1024 + 1 - 44)]);
    const declared = await upload(id, big, "audio/wav");
    expect(declared.status).toBe(413);
    expect(declared.body).toMatchObject({ error: "413" });

    // Chunked, so the server only learns the size as the bytes arrive.
    const chunk = big.subarray(0, 1024 * 1024);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 21) controller.close();
        else controller.enqueue(sent++ === 0 ? chunk : new Uint8Array(chunk.length));
      },
    });
    const res = await fetch(new URL(`${base}/${id}/raw`, api.url), {
      method: "POST",
      headers: { "X-Auth-Token": token, "Content-Type": "audio/wav" },
      body,
      duplex: "half",
    });
    expect(res.status).toBe(413);
    expect(res.headers.get("content-length")).not.toBe(null);

    const doc = await api.call<Media>("GET", `${base}/${id}`, { token });
    expect(doc.body.data).not.toHaveProperty("content_type");
    expect(await filesOf(id)).toEqual([]);
    expect((await api.call("GET", `${base}/${id}/raw`, { token })).status).toBe(404);
    // Exactly the limit is fine.
    expect((await upload(id, big.subarray(0, 20 * 1024 * 1024), "audio/wav")).status).toBe(200);
  });

  it("removes the audio file with the document", async () => {
    const id = await newMedia("Short-lived");
    await upload(id, wav, "audio/wav");
    const file = join(api.dataDir, "accounts", accountId, "media.attachments", id, "media.wav");
    expect((await readFile(file)).equals(wav)).toBe(true);
    const del = await api.call<Media>("DELETE", `${base}/${id}`, { token });
    expect(del.status).toBe(200);
    expect(existsSync(file)).toBe(false);
    expect((await api.call("GET", `${base}/${id}/raw`, { token })).status).toBe(404);
  });

  it("deletes the audio alone with DELETE on raw, keeping the document", async () => {
    const id = await newMedia("Retired");
    await upload(id, wav, "audio/wav");
    const res = await api.call<Media>("DELETE", `${base}/${id}/raw`, { token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ id, name: "Retired" });
    expect(res.body.data).not.toHaveProperty("content_type");
    expect(res.body.data).not.toHaveProperty("content_length");
    expect(await filesOf(id)).toEqual([]);
    expect((await api.call("GET", `${base}/${id}/raw`, { token })).status).toBe(404);
    expect((await api.call("GET", `${base}/${id}`, { token })).status).toBe(200);
    const again = await api.call("DELETE", `${base}/${id}/raw`, { token });
    expect(again.body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: id } });
  });

  it("refuses a stale If-Match on upload with 409", async () => {
    const id = await newMedia("Versioned");
    const first = await upload(id, wav, "audio/wav");
    await upload(id, wav, "audio/wav");
    const stale = await upload(id, wav, "audio/wav", { "If-Match": `"${first.body.revision ?? ""}"` });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({ message: "datastore_conflict" });
  });

  it("lets agents download but only admins upload, and keeps other accounts out", async () => {
    const id = await newMedia("Guarded");
    await upload(id, wav, "audio/wav");
    const agent = await api.login("agent1");
    expect((await download(`${base}/${id}/raw`, { token: agent.token })).bytes.equals(wav)).toBe(true);
    const refused = await api.call("POST", `${base}/${id}/raw`, { token: agent.token, body: wav, headers: { "Content-Type": "audio/wav" } });
    expect(refused.status).toBe(403);
    expect((await api.call("DELETE", `${base}/${id}/raw`, { token: agent.token })).status).toBe(403);
    const other = await createAccount(api, `othermedia${Date.now()}`);
    expect((await download(`${base}/${id}/raw`, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", `${base}/${id}/raw`)).status).toBe(401);
  });

  it("serves the demo hold music as it was seeded", async () => {
    const rows = await api.call<Media[]>("GET", base, { token, query: { "filter_name": "Hold music", paginate: "false" } });
    const id = rows.body.data[0]?.id ?? "";
    const res = await download(`${base}/${id}/raw`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("audio/wav");
    expect(res.bytes.equals(await readFile(join(ASSETS_DIR, "hold-music.wav")))).toBe(true);
  });
});
