// List pages kept per collection version (PageAnswers, server/http/resource.ts) through the real
// server: every page is asked for twice before each write (so it is kept when the write comes),
// and after each write (PUT, POST, PATCH, DELETE, and several writes sent at once) the page shows
// the change. The unit test (test/unit/rest-page-answers.test.ts) drives the store itself through
// durable creates and restarts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let token: string;
let devices: string;

const PAGES: Record<string, string>[] = [{ filter_device_type: "softphone", page_size: "50" }, { filter_device_type: "sip_device" }, { page_size: "2" }, { paginate: "false" }];

interface Row {
  id: string;
  name: string;
  device_type: string;
}

/**
 * Each page's rows (names and types), asked twice: with no write under way, the second answer
 * must be the first's but for the request's own keys.
 */
async function pages(writing = false): Promise<Row[][]> {
  const out: Row[][] = [];
  for (const query of PAGES) {
    const first = await api.call<Row[]>("GET", devices, { token, query });
    const again = await api.call<Row[]>("GET", devices, { token, query });
    expect(first.status, first.text).toBe(200);
    const strip = (b: typeof first.body) => ({ ...b, request_id: "", timestamp: "" });
    if (!writing) {
      expect(strip(again.body)).toEqual(strip(first.body));
      expect(again.headers.get("etag")).toBe(first.headers.get("etag"));
    }
    out.push(first.body.data.map((r) => ({ id: r.id, name: r.name, device_type: r.device_type })));
  }
  return out;
}

/** What the pages must show for these devices (sorted by id, as the list sorts them). */
function expected(all: Row[]): Row[][] {
  const sorted = [...all].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return [sorted.filter((r) => r.device_type === "softphone").slice(0, 50), sorted.filter((r) => r.device_type === "sip_device"), sorted.slice(0, 2), sorted];
}

async function all(): Promise<Row[]> {
  const res = await api.call<Row[]>("GET", devices, { token, query: { paginate: "false" } });
  return res.body.data.map((r) => ({ id: r.id, name: r.name, device_type: r.device_type }));
}

function device(name: string, type: string): Record<string, unknown> {
  return { name, device_type: type, sip: { username: name.replace(/\W/g, ""), password: "0123456789abcdef01234567" } };
}

beforeAll(async () => {
  api = await startApi();
  const login = await api.login();
  token = login.token;
  devices = `/v2/accounts/${login.accountId}/devices`;
});

afterAll(async () => {
  await api.close();
});

describe("list pages kept per collection version, through the server", () => {
  it("show every write at the next request, single or concurrent", async () => {
    const model: Row[] = await all();
    const check = async () => expect(await pages()).toEqual(expected(model));
    await check();

    const created = await api.call<Row>("PUT", devices, { token, data: device("page one", "softphone") });
    expect(created.status, created.text).toBe(201);
    model.push({ id: created.body.data.id, name: "page one", device_type: "softphone" });
    await check();

    const replaced = await api.call<Row>("POST", `${devices}/${created.body.data.id}`, { token, data: device("page one b", "sip_device") });
    expect(replaced.status, replaced.text).toBe(200);
    model[model.length - 1] = { id: created.body.data.id, name: "page one b", device_type: "sip_device" };
    await check();

    const patched = await api.call<Row>("PATCH", `${devices}/${created.body.data.id}`, { token, data: { name: "page one c" } });
    expect(patched.status, patched.text).toBe(200);
    model[model.length - 1] = { id: created.body.data.id, name: "page one c", device_type: "sip_device" };
    await check();

    // Several writes at once, each page asked for while they are under way and after.
    const writes = Array.from({ length: 6 }, (_, i) => api.call<Row>("PUT", devices, { token, data: device(`page many ${i}`, i % 2 === 0 ? "softphone" : "sip_device") }));
    await Promise.all([...writes, pages(true)]);
    const answers = await Promise.all(writes);
    answers.forEach((res, i) => {
      expect(res.status, res.text).toBe(201);
      model.push({ id: res.body.data.id, name: `page many ${i}`, device_type: i % 2 === 0 ? "softphone" : "sip_device" });
    });
    await check();

    const removed = await api.call("DELETE", `${devices}/${created.body.data.id}`, { token });
    expect(removed.status, removed.text).toBe(200);
    model.splice(
      model.findIndex((r) => r.id === created.body.data.id),
      1,
    );
    await check();
  });
});
