// Kazoo's interaction views of the CDRs: GET /cdrs/interaction (one row per interaction, its first
// leg, newest first), GET /users/{id}/cdrs/interaction (the user's legs only) and
// GET /cdrs/legs/{id} (every leg of one interaction, by its interaction id or by one of its CDRs'
// ids). The words are routes, never read as CDR ids.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CDRS_COLLECTION } from "../../server/calls/index.js";
import { toGregorianSeconds } from "../../server/clock.js";
import type { Collection } from "../../server/store/index.js";
import { startApi, type TestApi } from "../helpers/api.js";

interface Row {
  id: string;
  call_id: string;
  interaction_id?: string;
  owner_id?: string;
}

let api: TestApi;
let token: string;
let accountId: string;
let base: string;
let cdrs: Collection;
let agent1 = "";
let agent2 = "";
const ids: Record<string, string> = {};

/** A CDR as the call engine writes one, started `second` seconds into the test day. */
async function seed(second: number, fields: Record<string, unknown>): Promise<string> {
  const started = Date.UTC(2026, 0, 1, 12, 0, second);
  const doc = await cdrs.create(
    {
      call_id: `call-${second}`,
      call_direction: "inbound",
      direction: "inbound",
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      timestamp: toGregorianSeconds(started) + 10,
      duration_seconds: 10,
      billing_seconds: 8,
      hangup_cause: "NORMAL_CLEARING",
      hangup_code: "sip:200",
      pvt_started_ms: started,
      ...fields,
    },
    { modb: true },
  );
  return doc.id;
}

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
  agent1 = (await api.login("agent1")).ownerId;
  agent2 = (await api.login("agent2")).ownerId;
  base = `/v2/accounts/${accountId}/cdrs`;
  cdrs = await api.server.store.account(accountId, CDRS_COLLECTION);
  // A queue call: the caller's leg, agent1's leg, then agent2's after a transfer.
  ids.caller = await seed(1, { interaction_id: "63900000000-aaaa0001" });
  ids.agent1 = await seed(2, { interaction_id: "63900000000-aaaa0001", owner_id: agent1, call_direction: "outbound", direction: "outbound" });
  ids.agent2 = await seed(30, { interaction_id: "63900000000-aaaa0001", owner_id: agent2, call_direction: "outbound", direction: "outbound" });
  // A later call agent2 made alone, and an old CDR from before interactions were kept.
  ids.later = await seed(60, { interaction_id: "63900000000-bbbb0002", owner_id: agent2 });
  ids.lone = await seed(0, { owner_id: agent1 });
});

afterAll(async () => {
  await api.close();
});

const get = async (path: string, query: Record<string, string> = {}) => api.call<Row[]>("GET", path, { token, query });

describe("cdrs: interactions", () => {
  it("lists one row per interaction, its first leg, newest interaction first", async () => {
    const res = await get(`${base}/interaction`, { paginate: "false" });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r) => r.id)).toEqual([ids.later, ids.caller, ids.lone]);
  });

  it("pages and filters like the CDR list", async () => {
    const first = await get(`${base}/interaction`, { page_size: "1" });
    expect(first.body.data.map((r) => r.id)).toEqual([ids.later]);
    const next = await get(`${base}/interaction`, { page_size: "1", start_key: first.body.next_start_key ?? "" });
    expect(next.body.data.map((r) => r.id)).toEqual([ids.caller]);
    // The filter picks legs first: agent1's leg stands for the interaction when only outbound legs count.
    const outbound = await get(`${base}/interaction`, { filter_direction: "outbound", paginate: "false" });
    expect(outbound.body.data.map((r) => r.id)).toEqual([ids.agent1]);
  });

  it("a user's interactions show that user's first leg of each", async () => {
    const res = await get(`/v2/accounts/${accountId}/users/${agent2}/cdrs/interaction`, { paginate: "false" });
    expect(res.status).toBe(200);
    expect(res.body.data.map((r) => r.id)).toEqual([ids.later, ids.agent2]);
    expect((await get(`/v2/accounts/${accountId}/users/${"0".repeat(32)}/cdrs/interaction`)).status).toBe(404);
  });

  it("lists every leg of an interaction, oldest first, by interaction id or by one of its CDRs' ids", async () => {
    const byInteraction = await get(`${base}/legs/63900000000-aaaa0001`, { paginate: "false" });
    expect(byInteraction.status).toBe(200);
    expect(byInteraction.body.data.map((r) => r.id)).toEqual([ids.caller, ids.agent1, ids.agent2]);
    const byCdr = await get(`${base}/legs/${ids.agent2 ?? ""}`, { paginate: "false" });
    expect(byCdr.body.data.map((r) => r.id)).toEqual([ids.caller, ids.agent1, ids.agent2]);
    expect((await get(`${base}/legs/${ids.lone ?? ""}`)).body.data.map((r) => r.id)).toEqual([ids.lone]);
  });

  it("an unknown interaction is 404 bad_identifier; the words still leave CDR ids to the item route", async () => {
    const missing = await get(`${base}/legs/63900000000-ffff0009`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ message: "bad_identifier" });
    const one = await api.call<Row>("GET", `${base}/${ids.agent1 ?? ""}`, { token });
    expect(one.status).toBe(200);
    expect(one.body.data.id).toBe(ids.agent1);
  });
});
