// Kazoo's recordings.md, each request example sent as written (its headers, no body), checked for
// the documented status, envelope and data shape. Recordings are stored the way the call engine
// stores them (a document in the month's collection plus its WAV), since only calls make them.
//
// Examples in the document: 4. Passing as documented: 4. Marked differs: 0.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORDINGS_COLLECTION } from "../../server/calls/index.js";
import { wavHeader } from "../../server/media/wav.js";
import type { Collection } from "../../server/store/index.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { storeRecording } from "../helpers/stored-recordings.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
let agentId: string;
let store: Collection;
let seq = 0;

/** A curl line of the document against this server. */
function curl(method: string, path: string, headers: Record<string, string> = {}): Promise<CurlResult> {
  return send(api.url, method, path, headers);
}

const recordings = (): string => `/v2/accounts/${accountId}/recordings`;

/** A recording of a call `users` took part in, with a small WAV; its id and audio. */
async function record(users: string[]): Promise<{ id: string; audio: Buffer }> {
  seq += 1;
  const pcm = Buffer.alloc(320, seq);
  const audio = Buffer.concat([wavHeader({ channels: 2, sampleRate: 8000, bitsPerSample: 16 }, pcm.length), pcm]);
  const id = await storeRecording(store, seq, { direction: "inbound", pvt_user_ids: users }, audio);
  return { id, audio };
}

beforeAll(async () => {
  api = await startApi();
  ({ accountId, token: admin } = await api.login("admin"));
  ({ token: agent, ownerId: agentId } = await api.login("agent1"));
  store = await api.server.store.account(accountId, RECORDINGS_COLLECTION);
});

afterAll(async () => {
  await api.close();
});

describe("recordings.md", () => {
  it("recordings.md › Fetch recordings", async () => {
    const theirs = await record([agentId]);
    const other = await record([]);
    const res = await curl("GET", recordings(), { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    const rows = res.json.data as Record<string, unknown>[];
    // Newest first, each the document plus the types its audio comes in.
    expect(rows.slice(0, 2).map((row) => row.id)).toEqual([other.id, theirs.id]);
    expect(rows[1]).toMatchObject({ id: theirs.id, call_id: expect.any(String), media_type: "wav", content_type: "audio/wav", start: expect.any(Number), _read_only: { content_types: ["audio/wav"] } });
    // An agent lists the recordings of their own calls; the section's user path lists a user's.
    const mine = await curl("GET", recordings(), { "X-Auth-Token": agent });
    expectSuccess(mine, 200);
    expect((mine.json.data as { id: string }[]).map((row) => row.id)).toEqual([theirs.id]);
    const byUser = await curl("GET", `/v2/accounts/${accountId}/users/${agentId}/recordings`, { "X-Auth-Token": admin });
    expectSuccess(byUser, 200);
    expect((byUser.json.data as { id: string }[]).map((row) => row.id)).toEqual([theirs.id]);
  });

  it("recordings.md › Fetch recording media or document (the document)", async () => {
    const { id } = await record([agentId]);
    const res = await curl("GET", `${recordings()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, {
      id,
      call_id: expect.any(String),
      caller_id_number: "+14155550100",
      callee_id_number: "1002",
      direction: "inbound",
      duration_ms: 20,
      media_type: "wav",
      content_type: "audio/wav",
      source_type: "kz_media_recording",
      name: expect.stringMatching(/\.wav$/),
    });
    expect(res.json.data).not.toHaveProperty("pvt_user_ids");
    expect(res.json).toMatchObject({ auth_token: admin, revision: expect.stringMatching(/^\d+-[0-9a-f]{32}$/) });
    // Another's recording is not an agent's to read.
    const other = await record([]);
    expectError(await curl("GET", `${recordings()}/${other.id}`, { "X-Auth-Token": agent }), 403, "forbidden");
  });

  it("recordings.md › Fetch recording media or document (Accept: audio/mpeg: the audio as stored)", async () => {
    const { id, audio } = await record([agentId]);
    const res = await fetch(`${api.url}${recordings()}/${id}`, { headers: { "X-Auth-Token": admin, Accept: "audio/mpeg" } });
    expect(res.status).toBe(200);
    // The stored attachment is sent in its own type, as Kazoo sends it (recordings here are WAV).
    expect(res.headers.get("content-type")).toBe("audio/wav");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="call_recording_call-${seq}.wav"`);
    expect(Buffer.from(await res.arrayBuffer())).toEqual(audio);
    // The document's tunnelled form, and inline.
    const tunnelled = await fetch(`${api.url}${recordings()}/${id}?accept=audio/mpeg&inline=true`, { headers: { "X-Auth-Token": agent } });
    expect(tunnelled.status).toBe(200);
    expect(tunnelled.headers.get("content-disposition")).toBe(`inline; filename="call_recording_call-${seq}.wav"`);
    expect(Buffer.from(await tunnelled.arrayBuffer())).toEqual(audio);
  });

  it("recordings.md › Remove a recording", async () => {
    const { id } = await record([agentId]);
    // Even the agent whose call it was may not delete it: a recording may settle a dispute.
    expectError(await curl("DELETE", `${recordings()}/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const res = await curl("DELETE", `${recordings()}/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { id, media_type: "wav" });
    expectError(await curl("GET", `${recordings()}/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id, message: "bad identifier" });
    const audio = await fetch(`${api.url}${recordings()}/${id}`, { headers: { "X-Auth-Token": admin, Accept: "audio/wav" } });
    expect(audio.status).toBe(404);
  });
});
