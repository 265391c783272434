import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { startApi, type TestApi } from "../helpers/api.js";

const tone = { module: "play", data: { uri: "tone_stream://%(1000,0,440)" }, children: {} };

describeConformance({
  name: "callflows",
  field: "name",
  adminWrites: true,
  readOnly: ["metadata"],
  valid: (n, { ownerId }) => ({ name: `route ${n}`, numbers: [`77${n}`], flow: { module: "user", data: { id: ownerId }, children: {} } }),
  invalid: [
    { title: "a missing flow", data: { numbers: ["7000"] }, field: "flow", rule: "required" },
    { title: "neither numbers nor patterns", data: { numbers: [], patterns: [], flow: tone }, field: "numbers", rule: "required" },
    { title: "a name over 128 characters", data: { name: "x".repeat(129), numbers: ["7000"], flow: tone }, field: "name", rule: "maxLength" },
    { title: "a number with letters", data: { numbers: ["12ab"], flow: tone }, field: "numbers.0", rule: "pattern" },
    { title: "a number over 64 characters", data: { numbers: ["1".repeat(65)], flow: tone }, field: "numbers.0", rule: "maxLength" },
    { title: "a number twice", data: { numbers: ["7000", "7000"], flow: tone }, field: "numbers", rule: "uniqueItems" },
    { title: "a number another callflow routes", data: { numbers: ["7000", "1002"], flow: tone }, field: "numbers", rule: "unique" },
    { title: "a pattern that is not a regex", data: { patterns: ["^\\+1(\\d{10}$"], flow: tone }, field: "patterns.0", rule: "pattern" },
    { title: "a flow that is not an object", data: { numbers: ["7000"], flow: "user" }, field: "flow", rule: "type" },
    { title: "an unknown module", data: { numbers: ["7000"], flow: { module: "voicemail", data: {} } }, field: "flow.module", rule: "enum" },
    { title: "a node without a module", data: { numbers: ["7000"], flow: { data: {} } }, field: "flow.module", rule: "required" },
    {
      title: "an unknown module deep in the tree",
      data: { numbers: ["7000"], flow: { ...tone, children: { _: { ...tone, children: { "1": { module: "menu", data: {} } } } } } },
      field: "flow.children._.children.1.module",
      rule: "enum",
    },
    { title: "a user that does not exist", data: { numbers: ["7000"], flow: { module: "user", data: { id: "0".repeat(32) } } }, field: "flow.data.id", rule: "not_found" },
    { title: "a user module without an id", data: { numbers: ["7000"], flow: { module: "user", data: {} } }, field: "flow.data.id", rule: "required" },
    { title: "a device that does not exist", data: { numbers: ["7000"], flow: { ...tone, children: { _: { module: "device", data: { id: "f".repeat(32) } } } } }, field: "flow.children._.data.id", rule: "not_found" },
    { title: "a queue that does not exist", data: { numbers: ["7000"], flow: { module: "callq", data: { queue_id: "a".repeat(32) } } }, field: "flow.data.queue_id", rule: "not_found" },
    { title: "a play of unknown media", data: { numbers: ["7000"], flow: { module: "play", data: { id: "b".repeat(32) } } }, field: "flow.data.id", rule: "not_found" },
    { title: "a play of a file: URI", data: { numbers: ["7000"], flow: { module: "play", data: { uri: "file:///etc/passwd" } } }, field: "flow.data.uri", rule: "format" },
    { title: "a play with nothing to play", data: { numbers: ["7000"], flow: { module: "play", data: {} } }, field: "flow.data.id", rule: "required" },
    { title: "an unknown callq_recipient action", data: { numbers: ["7000"], flow: { module: "callq_recipient", data: { action: "dance" } } }, field: "flow.data.action", rule: "enum" },
    { title: "an unknown callq_recipient link_method", data: { numbers: ["7000"], flow: { module: "callq_recipient", data: { action: "login", link_method: "voice" } } }, field: "flow.data.link_method", rule: "enum" },
    { title: "children that are not an object", data: { numbers: ["7000"], flow: { ...tone, children: [] } }, field: "flow.children", rule: "type" },
  ],
});

interface Callflow {
  id: string;
  name?: string;
  numbers: string[];
  patterns: string[];
  featurecode?: { name: string; number: string } | false;
  modules?: string[];
  flow: { module: string; data: Record<string, unknown>; children: Record<string, unknown> };
}

type Errors = Record<string, Record<string, { message: string; value?: unknown }>>;

describe("callflows: routing rules and module checks", () => {
  let api: TestApi;
  let token: string;
  let accountId: string;
  let ownerId: string;
  let base: string;

  beforeAll(async () => {
    api = await startApi();
    ({ token, accountId, ownerId } = await api.login("admin"));
    base = `/v2/accounts/${accountId}/callflows`;
  });
  afterAll(async () => {
    await api.close();
  });

  const list = async () => (await api.call<Callflow[]>("GET", base, { token, query: { paginate: "false" } })).body.data;
  const full = async (id: string) => (await api.call<Callflow>("GET", `${base}/${id}`, { token })).body.data;

  it("lists the demo callflows: users 1001..1005, queues 5001 and 5002, feature codes *20..*23", async () => {
    const rows = await list();
    const numbers = rows.flatMap((r) => r.numbers);
    expect(numbers).toEqual(expect.arrayContaining(["*20", "*21", "*22", "*23", "1001", "1002", "1003", "1004", "1005", "5001", "5002"]));
    const byNumber = new Map(rows.map((r) => [r.numbers[0], r]));
    expect(byNumber.get("*21")?.featurecode).toEqual({ name: "callq_ready", number: "21" });
    // Kazoo's listing row: featurecode false when the callflow is none, the flow's modules, flags.
    expect(byNumber.get("1001")?.featurecode).toBe(false);
    expect(byNumber.get("5001")?.modules).toEqual(["callq"]);
    for (const row of rows) {
      expect(Object.keys(row).sort()).toEqual(["featurecode", "flags", "id", "modules", "name", "numbers", "patterns"]);
    }
    const sales = await full(byNumber.get("5001")?.id ?? "");
    expect(sales.flow.module).toBe("callq");
    const admin = await full(byNumber.get("1001")?.id ?? "");
    expect(admin.flow).toEqual({ module: "user", data: { id: ownerId }, children: {} });
  });

  it("accepts every demo callflow written back unchanged (the seed obeys the rules)", async () => {
    for (const row of await list()) {
      const doc = await full(row.id);
      const res = await api.call("POST", `${base}/${row.id}`, { token, data: doc });
      expect(res.status, `${row.numbers.join()} ${res.text}`).toBe(200);
    }
  });

  it("gives a number to one callflow only, naming the clash, and lets a callflow keep its own numbers", async () => {
    const flow = { module: "user", data: { id: ownerId }, children: {} };
    const clash = await api.call<Errors>("PUT", base, { token, data: { numbers: ["8100", "5001"], flow } });
    expect(clash.status).toBe(400);
    expect(clash.body.data.numbers?.unique?.value).toBe("5001");
    expect(clash.body.data.numbers?.unique?.message).toContain("5001");

    const mine = await api.call<Callflow>("PUT", base, { token, data: { numbers: ["8100"], flow } });
    expect(mine.status).toBe(201);
    const again = await api.call("POST", `${base}/${mine.body.data.id}`, { token, data: { numbers: ["8100", "8101"], flow } });
    expect(again.status, again.text).toBe(200);
    const stolen = await api.call<Errors>("PATCH", `${base}/${mine.body.data.id}`, { token, data: { numbers: ["8100", "*20"] } });
    expect(stolen.status).toBe(400);
    expect(stolen.body.data.numbers?.unique?.value).toBe("*20");

    // Once deleted, its numbers are free again.
    expect((await api.call("DELETE", `${base}/${mine.body.data.id}`, { token })).status).toBe(200);
    expect((await api.call("PUT", base, { token, data: { numbers: ["8101"], flow } })).status).toBe(201);
  });

  it("stores patterns that compile and refuses the one that does not, by index", async () => {
    const ok = await api.call<Callflow>("PUT", base, { token, data: { patterns: ["^\\+?1?(\\d{10})$", "^9(\\d+)$"], flow: tone } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.data.numbers).toEqual([]);
    expect(ok.body.data.patterns).toEqual(["^\\+?1?(\\d{10})$", "^9(\\d+)$"]);
    const bad = await api.call<Errors>("PUT", base, { token, data: { patterns: ["^ok$", "(unclosed", "[z-a]"], flow: tone } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.data).sort()).toEqual(["patterns.1", "patterns.2"]);
    expect(bad.body.data["patterns.1"]?.pattern?.value).toBe("(unclosed");
  });

  it("checks the ids each module names against the account's users, devices, queues and media", async () => {
    const devices = await api.call<{ id: string; name: string }[]>("GET", `/v2/accounts/${accountId}/devices`, { token, query: { paginate: "false" } });
    const deviceId = devices.body.data[0]?.id ?? "";
    const media = await api.call<{ id: string }[]>("GET", `/v2/accounts/${accountId}/media`, { token, query: { paginate: "false" } });
    const mediaId = media.body.data[0]?.id ?? "";
    const sales = (await list()).find((r) => r.numbers.includes("5001"));
    const queueId = String((await full(sales?.id ?? "")).flow.data.id);

    const flow = {
      module: "play",
      data: { id: mediaId },
      children: {
        _: {
          module: "callq",
          data: { queue_id: queueId },
          children: {
            _: { module: "device", data: { id: deviceId }, children: { _: { module: "user", data: { id: ownerId }, children: {} } } },
            "1": { module: "callq_recipient", data: { action: "login_ready", link_method: "pin", target_queue: queueId, success_media: "tone_stream://%(200,0,800)" } },
          },
        },
      },
    };
    const res = await api.call<Callflow>("PUT", base, { token, data: { name: "every module", numbers: ["8200"], flow } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.data.flow).toEqual(flow);

    // The same tree with every id broken names each failing node by its path.
    const broken = structuredClone(flow);
    broken.data.id = "1".repeat(32);
    broken.children._.data.queue_id = "2".repeat(32);
    broken.children._.children._.data.id = "3".repeat(32);
    broken.children._.children._.children._.data.id = "4".repeat(32);
    broken.children._.children["1"].data.target_queue = "5".repeat(32);
    const bad = await api.call<Errors>("PUT", base, { token, data: { numbers: ["8201"], flow: broken } });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.data).sort()).toEqual([
      "flow.children._.children.1.data.target_queue",
      "flow.children._.children._.children._.data.id",
      "flow.children._.children._.data.id",
      "flow.children._.data.queue_id",
      "flow.data.id",
    ]);
    for (const field of Object.values(bad.body.data)) expect(field).toHaveProperty("not_found");
    expect(bad.body.data["flow.children._.children._.data.id"]?.not_found?.value).toBe("3".repeat(32));
  });

  it("takes the queue's id alias and a play of a URI, and refuses another module's ids in the wrong collection", async () => {
    const sales = (await list()).find((r) => r.numbers.includes("5001"));
    const queueId = String((await full(sales?.id ?? "")).flow.data.id);
    const alias = await api.call("PUT", base, { token, data: { numbers: ["8300"], flow: { module: "callq", data: { id: queueId } } } });
    expect(alias.status, alias.text).toBe(201);
    for (const [i, data] of [{ uri: "silence_stream://500" }, { id: "tone_stream://%(500,0,440)" }].entries()) {
      const play = await api.call("PUT", base, { token, data: { numbers: [`831${i}`], flow: { module: "play", data } } });
      expect(play.status, play.text).toBe(201);
    }
    // Nothing here fetches audio from the web (server/media/reference.ts): refused, as everywhere.
    const web = await api.call<Errors>("PUT", base, { token, data: { numbers: ["8319"], flow: { module: "play", data: { uri: "https://example.com/a.wav" } } } });
    expect(web.status).toBe(400);
    expect(web.body.data["flow.data.uri"]).toHaveProperty("format");
    // A user id is not a device id.
    const wrong = await api.call<Errors>("PUT", base, { token, data: { numbers: ["8320"], flow: { module: "device", data: { id: ownerId } } } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.data["flow.data.id"]?.not_found?.value).toBe(ownerId);
  });

  it("limits the depth of the tree, so no input can make the server recurse without bound", async () => {
    const chain = (depth: number) => {
      let node: Record<string, unknown> = { ...tone };
      for (let i = 1; i < depth; i++) node = { ...tone, children: { _: node } };
      return node;
    };
    expect((await api.call("PUT", base, { token, data: { numbers: ["8400"], flow: chain(32) } })).status).toBe(201);
    const deep = await api.call<Errors>("PUT", base, { token, data: { numbers: ["8401"], flow: chain(33) } });
    expect(deep.status).toBe(400);
    const [field] = Object.keys(deep.body.data);
    expect(field).toBe(`flow${".children._".repeat(32)}`);
    expect(deep.body.data[field ?? ""]).toHaveProperty("maxDepth");
    const absurd = await api.call("PUT", base, { token, data: { numbers: ["8402"], flow: chain(300) } });
    expect(absurd.status).toBe(400);
    expect((await list()).some((r) => r.numbers.includes("8401") || r.numbers.includes("8402"))).toBe(false);
    expect((await api.call("GET", base, { token })).status).toBe(200);
  });
});
