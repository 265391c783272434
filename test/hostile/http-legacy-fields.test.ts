// Issue 14, item 15: a document stored before server-owned fields were dropped (a PATCH then kept
// `revision`, `created` ... as data) loses them at its next PATCH, and keeps its private fields.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let token: string;
let accountId: string;

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
});
afterAll(async () => {
  await api.close();
});

describe("server-owned fields already in a stored document", () => {
  it("are gone after the next PATCH, while pvt_ fields stay stored", async () => {
    const devices = await api.server.store.account(accountId, "devices");
    const legacy = await devices.create({
      name: "legacy",
      enabled: true,
      revision: "1-client",
      created: 5,
      modified: 6,
      attachments: { "x.wav": {} },
      _read_only: { content_types: [] },
      pvt_marker: "kept",
    });
    const res = await api.call<Record<string, unknown>>("PATCH", `/v2/accounts/${accountId}/devices/${legacy.id}`, { token, data: { name: "patched" } });
    expect(res.status, res.text).toBe(200);
    const stored = devices.get(legacy.id);
    expect(stored?.data.name).toBe("patched");
    for (const key of ["revision", "created", "modified", "attachments", "_read_only"]) expect(stored?.data, key).not.toHaveProperty(key);
    expect(stored?.data.pvt_marker).toBe("kept");
  });
});
