// GET/DELETE /v2/accounts/{id}/recordings as the hosted API behaves, on recordings stored the way
// the call engine stores them: newest first with paging and filters, `_read_only.content_types`,
// the document or the audio by Accept / accept=, Range (206, 416), inline, 404 bad_identifier,
// DELETE removing the file (admin only), 405 for writes, 403 across accounts.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RECORDING_ATTACHMENT, RECORDINGS_COLLECTION } from "../../server/calls/index.js";
import { toGregorianSeconds } from "../../server/clock.js";
import { wavHeader } from "../../server/media/wav.js";
import type { Collection } from "../../server/store/index.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";
import { storeRecording } from "../helpers/stored-recordings.js";

interface Row {
  id: string;
  call_id: string;
  direction: string;
  owner_id?: string;
  _read_only?: { content_types: string[] };
  [key: string]: unknown;
}

let api: TestApi;
let token: string;
let accountId: string;
let ownerId: string;
let base: string;
let recordings: Collection;
/** Ids of the seeded recordings, oldest first. */
const seeded: string[] = [];
/** The audio of each seeded recording, by id. */
const audio = new Map<string, Buffer>();

/** A small stereo WAV whose bytes differ per recording, so a range read proves which file it came from. */
function wav(n: number): Buffer {
  const data = Buffer.alloc(640);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7 + n) & 0xff;
  return Buffer.concat([wavHeader({ channels: 2, sampleRate: 8000, bitsPerSample: 16 }, data.length), data]);
}

async function seed(n: number, fields: Record<string, unknown>, withAudio = true): Promise<string> {
  const bytes = withAudio ? wav(n) : null;
  const id = await storeRecording(recordings, n, fields, bytes);
  if (bytes !== null) audio.set(id, bytes);
  return id;
}

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId, ownerId } = await api.login("admin"));
  base = `/v2/accounts/${accountId}/recordings`;
  recordings = await api.server.store.account(accountId, RECORDINGS_COLLECTION);
  for (let n = 1; n <= 5; n++) {
    seeded.push(await seed(n, n % 2 === 0 ? { direction: "outbound", owner_id: ownerId } : { direction: "inbound" }));
  }
});
afterAll(async () => {
  await api?.close();
});

const list = (query: Record<string, string> = {}) => api.call<Row[]>("GET", base, { token, query });
const download = (id: string, headers: Record<string, string> = {}, query = "") =>
  fetch(`${api.url}${base}/${id}${query}`, { headers: { "X-Auth-Token": token, ...headers } });

describe("recordings: list", () => {
  it("lists newest first, each row with its document fields and _read_only.content_types", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(res.body.data.map((r) => r.id)).toEqual([...seeded].reverse());
    expect(res.body.data[0]).toMatchObject({ id: seeded[4], call_id: "call-5", direction: "inbound", _read_only: { content_types: ["audio/wav"] } });
    expect(Object.keys(res.body.data[0] ?? {}).some((k) => k.startsWith("pvt_"))).toBe(false);
    for (const id of seeded) expect(id).toMatch(/^\d{6}-[0-9a-f]{32}$/);
    expect((await list({ ascending: "true" })).body.data.map((r) => r.id)).toEqual(seeded);
  });

  it("pages with page_size, start_key and next_start_key; paginate=false gives everything", async () => {
    const first = await list({ page_size: "2" });
    expect(first.body.data.map((r) => r.id)).toEqual([seeded[4], seeded[3]]);
    expect(first.body.page_size).toBe(2);
    const next = first.body.next_start_key ?? "";
    expect(next).not.toBe("");
    const second = await list({ page_size: "2", start_key: next });
    expect(second.body.data.map((r) => r.id)).toEqual([seeded[2], seeded[1]]);
    const last = await list({ page_size: "2", start_key: second.body.next_start_key ?? "" });
    expect(last.body.data.map((r) => r.id)).toEqual([seeded[0]]);
    expect(last.body.next_start_key).toBeUndefined();
    const all = await list({ paginate: "false" });
    expect(all.body.data).toHaveLength(5);
    expect(all.body.page_size).toBeUndefined();
    const bad = await list({ page_size: "0" });
    expect(bad.status).toBe(404);
    expect(bad.body.message).toBe("faulty_request");
  });

  it("filters, AND-combined", async () => {
    expect((await list({ filter_direction: "outbound" })).body.data.map((r) => r.id)).toEqual([seeded[3], seeded[1]]);
    expect((await list({ filter_not_direction: "outbound" })).body.data.map((r) => r.id)).toEqual([seeded[4], seeded[2], seeded[0]]);
    expect((await list({ filter_owner_id: ownerId, filter_call_id: "call-4" })).body.data.map((r) => r.id)).toEqual([seeded[3]]);
    expect((await list({ has_key: "owner_id" })).body.data).toHaveLength(2);
    expect((await list({ key_missing: "owner_id" })).body.data).toHaveLength(3);
    expect((await list({ filter_duration_ms: "20" })).body.data).toHaveLength(5);
    expect((await list({ created_from: String(toGregorianSeconds(Date.now()) + 3600) })).body.data).toEqual([]);
    expect((await list({ filter_pvt_started_ms: String(Date.UTC(2026, 0, 1, 12, 0, 1)) })).body.data).toEqual([]);
  });
});

describe("recordings: one", () => {
  it("reads the document, and 404 bad_identifier with the id as cause when there is none", async () => {
    const id = seeded[0] ?? "";
    const res = await api.call<Row>("GET", `${base}/${id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, call_id: "call-1", media_type: "wav" });
    expect(res.body.revision).toMatch(/^\d+-[0-9a-f]{32}$/);
    const missing = await api.call("GET", `${base}/202601-${"0".repeat(32)}`, { token });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ error: "404", message: "bad_identifier", data: { cause: `202601-${"0".repeat(32)}` } });
  });

  it("streams the audio for Accept: audio/wav and for accept=audio/wav, as an attachment unless inline=true", async () => {
    const id = seeded[1] ?? "";
    const bytes = audio.get(id);
    const byHeader = await download(id, { Accept: "audio/wav" });
    expect(byHeader.status).toBe(200);
    expect(byHeader.headers.get("content-type")).toBe("audio/wav");
    expect(byHeader.headers.get("content-length")).toBe(String(bytes?.length));
    expect(byHeader.headers.get("accept-ranges")).toBe("bytes");
    expect(byHeader.headers.get("content-disposition")).toBe('attachment; filename="call_recording_call-2.wav"');
    expect(Buffer.from(await byHeader.arrayBuffer())).toEqual(bytes);

    const byQuery = await download(id, {}, "?accept=audio/wav&inline=true");
    expect(byQuery.status).toBe(200);
    expect(byQuery.headers.get("content-disposition")).toBe('inline; filename="call_recording_call-2.wav"');
    expect(Buffer.from(await byQuery.arrayBuffer())).toEqual(bytes);

    // A browser's catch-all is not a request for audio: the document comes back.
    const json = await download(id, { Accept: "*/*" });
    expect(json.headers.get("content-type")).toContain("application/json");
  });

  it("honours Range: 206 with Content-Range, a suffix range, and 416 past the end", async () => {
    const id = seeded[2] ?? "";
    const bytes = audio.get(id) ?? Buffer.alloc(0);
    const part = await download(id, { Accept: "audio/wav", Range: "bytes=44-53" });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe(`bytes 44-53/${bytes.length}`);
    expect(part.headers.get("content-length")).toBe("10");
    expect(Buffer.from(await part.arrayBuffer())).toEqual(bytes.subarray(44, 54));

    const tail = await download(id, { Accept: "audio/wav", Range: "bytes=-4" });
    expect(tail.status).toBe(206);
    expect(Buffer.from(await tail.arrayBuffer())).toEqual(bytes.subarray(bytes.length - 4));

    const beyond = await download(id, { Accept: "audio/wav", Range: `bytes=${bytes.length}-` });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get("content-range")).toBe(`bytes */${bytes.length}`);
  });

  it("answers 404 for the audio of a recording that has none", async () => {
    const id = await seed(9, { direction: "inbound" }, false);
    const res = await download(id, { Accept: "audio/wav" });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ message: "bad_identifier", data: { cause: id } });
    await recordings.delete(id);
  });
});

describe("recordings: delete and writes", () => {
  it("deletes the document and its file (admin only); the id is then unknown", async () => {
    const id = seeded[3] ?? "";
    const file = join(api.dataDir, "accounts", accountId, "recordings.attachments", id, RECORDING_ATTACHMENT);
    expect(existsSync(file)).toBe(true);

    const agent = await api.login("agent1");
    const refused = await api.call("DELETE", `${base}/${id}`, { token: agent.token });
    expect(refused.status).toBe(403);
    expect(existsSync(file)).toBe(true);
    // Any user of the account may list them (only theirs: see "who sees which").
    expect((await api.call<Row[]>("GET", base, { token: agent.token })).status).toBe(200);

    const res = await api.call<Row>("DELETE", `${base}/${id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id, call_id: "call-4" });
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(api.dataDir, "accounts", accountId, "recordings.attachments", id))).toBe(false);
    expect((await api.call("GET", `${base}/${id}`, { token })).status).toBe(404);
    expect((await list()).body.data.map((r) => r.id)).not.toContain(id);
    expect((await api.call("DELETE", `${base}/${id}`, { token })).status).toBe(404);
  });

  it("has no writes: PUT, POST and PATCH answer 405", async () => {
    expect((await api.call("PUT", base, { token, data: { name: "x" } })).status).toBe(405);
    const id = seeded[0] ?? "";
    for (const method of ["POST", "PATCH"]) expect((await api.call(method, `${base}/${id}`, { token, data: { name: "x" } })).status).toBe(405);
  });

  it("keeps other accounts out: 403, and 401 without a token", async () => {
    const other = await createAccount(api, "elsewhere");
    expect((await api.call("GET", base, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", `${base}/${seeded[0] ?? ""}`, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", base)).status).toBe(401);
    const theirs = await api.call<Row[]>("GET", `/v2/accounts/${other.accountId}/recordings`, { token: other.token });
    expect(theirs.body.data).toEqual([]);
  });
});

describe("recordings: who sees which", () => {
  const ids: Record<string, string> = {};
  const users: Record<string, { token: string; ownerId: string }> = {};
  let sales = "";

  beforeAll(async () => {
    for (const name of ["agent1", "agent2", "agent3", "supervisor"]) users[name] = await api.login(name);
    const queues = await api.server.store.account(accountId, "callq_queues");
    sales = queues.all().find((q) => q.data.name === "Sales")?.id ?? "";
    expect(sales).not.toBe("");
    // A queue the supervisor is no member of.
    const billing = await queues.create({ name: "Billing", members: { [users.agent3?.ownerId ?? ""]: "" } });
    const who = (name: string) => users[name]?.ownerId ?? "";
    // One attended transfer: agent1 took the Sales call, agent2 took it over; both parts share the interaction.
    ids.part1 = await seed(21, { pvt_user_ids: [who("agent1")], queue_id: sales, interaction_id: "63900000000-aaaa0001" });
    ids.part2 = await seed(22, { pvt_user_ids: [who("agent2")], queue_id: sales, interaction_id: "63900000000-aaaa0001" });
    ids.billing = await seed(23, { pvt_user_ids: [who("agent3")], queue_id: billing.id, interaction_id: "63900000000-bbbb0002" });
    // A call between agent2 and the admin, through no queue.
    ids.direct = await seed(24, { pvt_user_ids: [who("agent2"), ownerId] });
  });

  const listAs = async (name: string) => {
    const res = await api.call<Row[]>("GET", base, { token: users[name]?.token ?? "", query: { paginate: "false" } });
    expect(res.status).toBe(200);
    return res.body.data.map((r) => r.id);
  };

  it("an agent lists only the interactions they took part in, both parts of a transferred call included", async () => {
    expect(await listAs("agent1")).toEqual([ids.part2, ids.part1]);
    expect(await listAs("agent2")).toEqual([ids.direct, ids.part2, ids.part1]);
    expect(await listAs("agent3")).toEqual([ids.billing]);
  });

  it("a supervisor also lists their queues' calls, not other queues'; an admin lists everything", async () => {
    expect(await listAs("supervisor")).toEqual([ids.part2, ids.part1]);
    const all = (await api.call<Row[]>("GET", base, { token, query: { paginate: "false" } })).body.data.map((r) => r.id);
    for (const id of Object.values(ids)) expect(all).toContain(id);
  });

  it("an API key's token, the account's own, sees and plays everything", async () => {
    const apiKey = String((await api.server.store.global("accounts")).get(accountId)?.data.pvt_api_key);
    const login = await api.call<{ account_id: string }>("PUT", "/v2/api_auth", { data: { api_key: apiKey } });
    expect(login.status).toBe(201);
    const keyToken = String(login.body.auth_token);
    const listed = (await api.call<Row[]>("GET", base, { token: keyToken, query: { paginate: "false" } })).body.data.map((r) => r.id);
    for (const id of Object.values(ids)) expect(listed).toContain(id);
    expect((await api.call("GET", `${base}/${ids.billing ?? ""}`, { token: keyToken })).status).toBe(200);
  });

  it("a user's recordings (Kazoo's /users/{id}/recordings): the calls their phones were in, among those the reader may see", async () => {
    const userList = async (reader: string, whose: string) => {
      const res = await api.call<Row[]>("GET", `/v2/accounts/${accountId}/users/${whose}/recordings`, { token: reader, query: { paginate: "false" } });
      expect(res.status).toBe(200);
      return res.body.data.map((r) => r.id);
    };
    const agent2 = users.agent2?.ownerId ?? "";
    // The admin sees all of agent2's calls; agent1 only the one they shared with agent2.
    expect(await userList(token, agent2)).toEqual([ids.direct, ids.part2]);
    expect(await userList(users.agent1?.token ?? "", agent2)).toEqual([ids.part2]);
    expect(await userList(users.agent3?.token ?? "", agent2)).toEqual([]);
    const missing = await api.call("GET", `/v2/accounts/${accountId}/users/${"0".repeat(32)}/recordings`, { token });
    expect(missing.status).toBe(404);
  });

  it("filter_interaction_id finds every part of one interaction, oldest part last", async () => {
    const res = await api.call<Row[]>("GET", base, { token, query: { filter_interaction_id: "63900000000-aaaa0001" } });
    expect(res.body.data.map((r) => r.id)).toEqual([ids.part2, ids.part1]);
    expect(res.body.data[0]).toMatchObject({ interaction_id: "63900000000-aaaa0001", queue_id: sales });
  });

  it("reading or playing another's recording is 403 forbidden, and so is an id that does not exist", async () => {
    const agent1 = users.agent1?.token ?? "";
    for (const id of [ids.billing, ids.direct, seeded[0]]) {
      const doc = await api.call("GET", `${base}/${id ?? ""}`, { token: agent1 });
      expect(doc.status).toBe(403);
      expect(doc.body).toMatchObject({ error: "403", message: "forbidden" });
      const wav = await fetch(`${api.url}${base}/${id ?? ""}?inline=true`, { headers: { "X-Auth-Token": agent1, Accept: "audio/wav" } });
      expect(wav.status).toBe(403);
    }
    expect((await api.call("GET", `${base}/202601-${"0".repeat(32)}`, { token: agent1 })).status).toBe(403);
    const supervisor = users.supervisor?.token ?? "";
    expect((await api.call("GET", `${base}/${ids.billing ?? ""}`, { token: supervisor })).status).toBe(403);
    // Their own, and the colleague's part of the call they transferred, play.
    for (const id of [ids.part1, ids.part2]) {
      const wav = await fetch(`${api.url}${base}/${id ?? ""}`, { headers: { "X-Auth-Token": agent1, Accept: "audio/wav" } });
      expect(wav.status).toBe(200);
      expect(Buffer.from(await wav.arrayBuffer())).toEqual(audio.get(id ?? ""));
    }
    expect((await api.call("GET", `${base}/${ids.billing ?? ""}`, { token: supervisor })).status).toBe(403);
    expect((await api.call("GET", `${base}/${ids.part2 ?? ""}`, { token: supervisor })).status).toBe(200);
    expect((await api.call("GET", `${base}/${ids.billing ?? ""}`, { token })).status).toBe(200);
  });

  it("only an admin deletes: the agent and the supervisor are refused their own queue's recording, which stays", async () => {
    for (const name of ["agent1", "supervisor"]) {
      const res = await api.call("DELETE", `${base}/${ids.part1 ?? ""}`, { token: users[name]?.token ?? "" });
      expect(res.status).toBe(403);
    }
    expect((await api.call("GET", `${base}/${ids.part1 ?? ""}`, { token })).status).toBe(200);
  });
});
