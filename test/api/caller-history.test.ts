// The caller history (local addition, issue 19 item 3) over real HTTP: who a number is, its calls
// (one row per interaction, newest first, paged) with agents, disposition, note and recordings,
// its texts; E.164 and national forms of one number found together, another number sharing its
// tail left out; the index kept as CDRs are written, changed and deleted; who may read it (an agent
// only a number ringing them or on a call with them) and bad input refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CDRS_COLLECTION, RECORDINGS_COLLECTION } from "../../server/calls/index.js";
import { toGregorianSeconds } from "../../server/clock.js";
import type { Collection } from "../../server/store/index.js";
import { CONTACTS_COLLECTION } from "../../server/texting/contacts.js";
import { MESSAGES_COLLECTION } from "../../server/texting/service.js";
import { createAccount, type TestApi } from "../helpers/api.js";
import { startCallApi, type CallApi } from "../helpers/call-api.js";
import { connected, until } from "../helpers/fake-signalling.js";
import { poll } from "../helpers/poll.js";

interface CallRow {
  interaction_id: string;
  call_id: string;
  timestamp: number;
  direction: string;
  agents: { user_id: string; name: string }[];
  disposition?: { code: string; note?: string };
  recording_ids: string[];
}
interface History {
  number: string;
  name?: string;
  contact_id?: string;
  user_id?: string;
  calls: CallRow[];
  texts: { body: string; direction: string }[];
}

let t: CallApi;
let api: TestApi;
let admin: string;
let base: string;
let cdrs: Collection;
const tokens: Record<string, string> = {};
const ids: Record<string, string> = {};
const NUMBER = "+14155550100";

const token = (username: string): string => tokens[username] ?? "";
const id = (username: string): string => ids[username] ?? "";

/** A CDR as the call engine writes one, started `second` seconds into the test day. */
async function seed(second: number, fields: Record<string, unknown>): Promise<string> {
  const started = Date.UTC(2026, 0, 1, 12, 0, second);
  const doc = await cdrs.create(
    {
      call_id: `call-${second}`,
      call_direction: "inbound",
      direction: "inbound",
      caller_id_name: "Casey Customer",
      caller_id_number: NUMBER,
      callee_id_number: "5001",
      timestamp: toGregorianSeconds(started),
      duration_seconds: 10,
      billing_seconds: 8,
      pvt_started_ms: started,
      ...fields,
    },
    { modb: true },
  );
  return doc.id;
}

const history = (number: string, as: string, query: Record<string, string> = {}) =>
  api.call<History>("GET", `${base}/caller_history/${encodeURIComponent(number)}`, { token: as, query });

beforeAll(async () => {
  t = await startCallApi();
  ({ api, token: admin, base } = t);
  for (const username of ["admin", "agent1", "agent2", "supervisor"]) {
    const login = await api.login(username);
    tokens[username] = login.token;
    ids[username] = login.ownerId;
  }
  cdrs = await api.server.store.account(t.accountId, CDRS_COLLECTION);
  // A queue call agent1 took and dispositioned: the caller's leg and the agent's.
  const disposition = { code: "sale", label: "Sale", note: "wants the blue one", recipient_id: id("agent1"), queue_id: "q-sales" };
  await seed(1, { interaction_id: "i-1", disposition });
  await seed(2, { interaction_id: "i-1", owner_id: id("agent1"), call_direction: "outbound", direction: "outbound", callee_id_number: "1002", disposition });
  // agent2 called the number back, dialled in its national form.
  await seed(60, { interaction_id: "i-2", owner_id: id("agent2"), caller_id_number: "1003", callee_id_number: "(415) 555-0100" });
  // Another number with the same last seven digits, and an unrelated call.
  await seed(90, { interaction_id: "i-3", caller_id_number: "+12125550100" });
  await seed(120, { interaction_id: "i-4", caller_id_number: "+14155550199" });
  const recordings = await api.server.store.account(t.accountId, RECORDINGS_COLLECTION);
  const recording = await recordings.create({ name: "r.wav", interaction_id: "i-1", pvt_started_ms: Date.UTC(2026, 0, 1, 12, 0, 2) });
  ids.recording = recording.id;
  const contacts = await api.server.store.account(t.accountId, CONTACTS_COLLECTION);
  const contact = await contacts.create({ user_id: id("admin"), phoneNumber: NUMBER, fullName: "Casey Customer", optedOut: false });
  ids.contact = contact.id;
  const messages = await api.server.store.account(t.accountId, MESSAGES_COLLECTION);
  await messages.create({ user_id: id("admin"), contact_id: contact.id, direction: "in", from: NUMBER, to: "+14155559999", body: "is it in stock?", date: 100 });
  await messages.create({ user_id: id("admin"), contact_id: contact.id, direction: "out", from: "+14155559999", to: NUMBER, body: "yes", date: 200 });
});
afterAll(async () => {
  await t?.close();
});

describe("caller history (local addition)", () => {
  it("shows who the number is, its calls newest first with agents, disposition, note and recordings, and its texts", async () => {
    const res = await history(NUMBER, admin);
    expect(res.status, res.text).toBe(200);
    const h = res.body.data;
    expect(h).toMatchObject({ number: NUMBER, name: "Casey Customer", contact_id: ids.contact });
    expect(h.calls.map((c) => c.interaction_id)).toEqual(["i-2", "i-1"]);
    expect(h.calls[0]).toMatchObject({ direction: "outbound", agents: [{ user_id: id("agent2"), name: "Blair Agent" }], recording_ids: [] });
    expect(h.calls[1]).toMatchObject({
      call_id: "call-1",
      direction: "inbound",
      agents: [{ user_id: id("agent1"), name: "Alex Agent" }],
      disposition: { code: "sale", note: "wants the blue one" },
      recording_ids: [ids.recording],
    });
    expect(h.texts.map((m) => m.body)).toEqual(["yes", "is it in stock?"]);
    // The national form finds the same calls.
    const national = await history("4155550100", admin);
    expect(national.body.data.calls.map((c) => c.interaction_id)).toEqual(["i-2", "i-1"]);
  });

  it("pages by call, and a user's number names the user", async () => {
    const first = await history(NUMBER, admin, { page_size: "1" });
    expect(first.body.data.calls.map((c) => c.interaction_id)).toEqual(["i-2"]);
    const next = first.body.next_start_key;
    expect(typeof next).toBe("string");
    const second = await history(NUMBER, admin, { page_size: "1", start_key: String(next) });
    expect(second.body.data.calls.map((c) => c.interaction_id)).toEqual(["i-1"]);
    expect(second.body.next_start_key).toBeUndefined();
    const user = await history("1002", admin);
    expect(user.body.data).toMatchObject({ number: "1002", name: "Alex Agent", user_id: id("agent1") });
    expect(user.body.data.calls.map((c) => c.interaction_id)).toEqual(["i-1"]);
  });

  it("keeps its index as CDRs are written, changed and deleted", async () => {
    const other = "+13105550142";
    const interactions = async () => (await history(other, admin)).body.data.calls.map((c) => c.interaction_id);
    expect(await interactions()).toEqual([]);
    const cdr = await seed(200, { interaction_id: "i-5", caller_id_number: other });
    expect(await interactions()).toEqual(["i-5"]);
    const doc = cdrs.get(cdr);
    await cdrs.update(cdr, { ...doc?.data, caller_id_number: "+13105550143" });
    expect(await interactions()).toEqual([]);
    await cdrs.update(cdr, { ...doc?.data, callee_id_number: other, caller_id_number: "1001" });
    expect(await interactions()).toEqual(["i-5"]);
    await cdrs.delete(cdr);
    expect(await interactions()).toEqual([]);
  });

  it("carries the CRM link of the call's queue, else the account's, checked as an https template", async () => {
    for (const bad of ["http://crm.example/?q={number}", "https://crm.example/?q={name}", "https://crm example/", "javascript:alert(1)"]) {
      const res = await api.call<Record<string, unknown>>("PATCH", base, { token: admin, data: { crm_link: bad } });
      expect(res.status, bad).toBe(400);
      expect(res.body.data).toHaveProperty("crm_link");
    }
    expect((await api.call<Record<string, unknown>>("GET", base, { token: admin })).body.data.crm_link).toBeUndefined();
    expect((await history(NUMBER, admin)).body.data).not.toHaveProperty("crm_link");
    const set = await api.call("PATCH", base, { token: admin, data: { crm_link: "https://crm.example/search?q={number}" } });
    expect(set.status, set.text).toBe(200);
    const list = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
    const support = list.body.data.find((q) => q.name === "Support")?.id ?? "";
    expect((await api.call("PATCH", `${base}/callq_queues/${support}`, { token: admin, data: { crm_link: "ftp://x/{number}" } })).status).toBe(400);
    const patched = await api.call("PATCH", `${base}/callq_queues/${support}`, { token: admin, data: { crm_link: "https://support.example/c/{number}/open" } });
    expect(patched.status, patched.text).toBe(200);
    expect((await history(NUMBER, admin)).body.data).toMatchObject({ crm_link: "https://crm.example/search?q=%2B14155550100" });
    expect((await history(NUMBER, admin, { queue_id: support })).body.data).toMatchObject({ crm_link: "https://support.example/c/%2B14155550100/open" });
    const unknown = await history(NUMBER, admin, { queue_id: "0123456789abcdef0123456789abcdef" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.data).toHaveProperty("queue_id");
  });

  it("refuses bad input in the envelope", async () => {
    for (const bad of ["abc", "+", "1", "12345678901234567890123"]) {
      const res = await history(bad, admin);
      expect(res.status, bad).toBe(400);
      expect(res.body.data).toHaveProperty("number");
    }
    expect((await history(NUMBER, admin, { page_size: "101" })).status).toBe(400);
    expect((await history(NUMBER, admin, { page_size: "0" })).status).not.toBe(200);
    expect((await history(NUMBER, admin, { paginate: "false" })).status).toBe(400);
    for (const verb of ["POST", "PUT", "DELETE"]) expect((await api.call(verb, `${base}/caller_history/${encodeURIComponent(NUMBER)}`, { token: admin, data: {} })).status, verb).toBe(405);
  });

  it("lets an agent read only a number ringing them or on a call with them; supervisors and admins any", async () => {
    expect((await history(NUMBER, token("supervisor"))).status).toBe(200);
    const refused = await history(NUMBER, token("agent1"));
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body.data)).toContain("not_on_call");
    expect((await api.call("GET", `${base}/caller_history/${encodeURIComponent(NUMBER)}`, {})).status).toBe(401);
    const other = await createAccount(api, "Elsewhere");
    expect((await api.call("GET", `${base}/caller_history/${encodeURIComponent(NUMBER)}`, { token: other.token })).status).toBe(403);

    const list = await api.call<{ id: string; name: string }[]>("GET", `${base}/callq_queues`, { token: admin });
    const sales = list.body.data.find((q) => q.name === "Sales");
    expect(sales).toBeDefined();
    await api.call("POST", `${base}/callq_queues/${sales?.id ?? ""}/recipients`, { token: admin, data: { action: "set", members: [id("agent1")] } });
    const agentPath = `${base}/callq_recipients/${id("agent1")}`;
    expect((await api.call("POST", agentPath, { token: token("agent1"), data: { action: "login_ready" } })).status).toBe(200);
    const sim = await api.call<{ id: string }>("POST", `${base}/sim/calls`, {
      token: admin,
      data: { to: "5001", caller_id_name: "Casey Customer", caller_id_number: NUMBER, audio: "silence_stream://60000" },
    });
    expect(sim.status, sim.text).toBe(201);
    const offered = await t.phone("agent1").incoming(15_000);
    // Ringing: the agent may read the caller's history (both forms), the other agent may not.
    const ringing = await history("4155550100", token("agent1"));
    expect(ringing.status, ringing.text).toBe(200);
    expect(ringing.body.data.calls.map((c) => c.interaction_id)).toContain("i-1");
    expect((await history(NUMBER, token("agent2"))).status).toBe(403);
    // Only that number: another is still refused.
    expect((await history("+14155550199", token("agent1"))).status).toBe(403);
    await offered.answer();
    await connected(offered);
    expect((await history(NUMBER, token("agent1"))).status).toBe(200);
    // An agent's own texts only: the admin's thread is not theirs.
    expect((await history(NUMBER, token("agent1"))).body.data.texts).toEqual([]);
    offered.hangup();
    await until(() => api.server.calls.channels.size === 0, "both legs to end");
    await poll("the refusal once the call is over", async () => ((await history(NUMBER, token("agent1"))).status === 403 ? true : undefined));
    await api.call("POST", agentPath, { token: token("agent1"), data: { action: "logout" } });
  });
});
