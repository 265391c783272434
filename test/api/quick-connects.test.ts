// /quick_connects (local addition): the house conformance suite, the targets each type needs,
// admins write and everyone of the account reads.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { createAccount, startApi, type TestApi } from "../helpers/api.js";

describeConformance({
  name: "quick_connects",
  field: "name",
  adminWrites: true,
  valid: (n, { ownerId }) => (n % 2 === 0 ? { name: `colleague ${n}`, type: "user", target_id: ownerId } : { name: `outside ${n}`, type: "external", number: `+1415555${2600 + n}` }),
  invalid: [
    { title: "a missing name", data: { type: "external", number: "+14155552671" }, field: "name", rule: "required" },
    { title: "a missing type", data: { name: "x", number: "+14155552671" }, field: "type", rule: "required" },
    { title: "an unknown type", data: { name: "x", type: "fax", number: "+14155552671" }, field: "type", rule: "enum" },
    { title: "a number with letters", data: { name: "x", type: "external", number: "call-me" }, field: "number", rule: "pattern" },
    { title: "an external one without a number", data: { name: "x", type: "external" }, field: "number", rule: "required" },
    { title: "a user one without its id", data: { name: "x", type: "user" }, field: "target_id", rule: "required" },
    { title: "a user one that is not in the account", data: { name: "x", type: "user", target_id: "0123456789abcdef0123456789abcdef" }, field: "target_id", rule: "not_found" },
    { title: "a queue one with a number", data: { name: "x", type: "queue", target_id: "0123456789abcdef0123456789abcdef", number: "100" }, field: "number", rule: "forbidden" },
  ],
});

describe("quick_connects: who reads and who writes", () => {
  let api: TestApi;
  let admin: { token: string; accountId: string };
  let agent: { token: string };
  let base: string;
  beforeAll(async () => {
    api = await startApi();
    admin = await api.login("admin");
    agent = await api.login("agent1");
    base = `/v2/accounts/${admin.accountId}/quick_connects`;
  });
  afterAll(async () => {
    await api.close();
  });

  it("an agent reads the list an admin chose, a queue among them, and may not change it", async () => {
    const queues = await api.call<{ id: string; name: string }[]>("GET", `/v2/accounts/${admin.accountId}/callq_queues`, { token: admin.token });
    const sales = queues.body.data.find((q) => q.name === "Sales");
    const made = await api.call<{ id: string }>("PUT", base, { token: admin.token, data: { name: "Sales desk", type: "queue", target_id: sales?.id } });
    expect(made.status, made.text).toBe(201);
    const read = await api.call<{ name: string; type: string; target_id: string }[]>("GET", base, { token: agent.token });
    expect(read.status).toBe(200);
    expect(read.body.data).toContainEqual(expect.objectContaining({ name: "Sales desk", type: "queue", target_id: sales?.id }));

    const refused = await api.call("PUT", base, { token: agent.token, data: { name: "mine", type: "external", number: "+14155550100" } });
    expect(refused.status).toBe(403);
    const deleted = await api.call("DELETE", `${base}/${made.body.data.id}`, { token: agent.token });
    expect(deleted.status).toBe(403);
    expect((await api.call<unknown[]>("GET", base, { token: agent.token })).body.data).toHaveLength(read.body.data.length);
  });

  it("refuses another account's token", async () => {
    const other = await createAccount(api, "Elsewhere quick");
    expect((await api.call("GET", base, { token: other.token })).status).toBe(403);
    expect((await api.call("GET", base, { token: null })).status).toBe(401);
  });
});
