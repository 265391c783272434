// Device lists through the real server, answered from the kept order and the device_type and
// owner_id indexes: a filtered list paged with next_start_key holds exactly the devices the
// unfiltered list shows with that type, follows a PATCH and a DELETE at once, and is the same
// after a restart on the same data directory; a user's devices follow a change of owner; a token
// of another account is refused.
import { describe, expect, it } from "vitest";
import type { RunningServer } from "../../server/index.js";
import { createAccount, credentials, DEMO_PASSWORD, startApi } from "../helpers/api.js";
import { restartableServer } from "../helpers/restartable-server.js";

interface Row {
  id: string;
  device_type: string;
  owner_id?: string;
  name?: string;
}

interface Page {
  status: number;
  data: Row[];
  next_start_key?: string;
}

const server = restartableServer("sb-list-pages-");

function start(): Promise<RunningServer> {
  return server.start();
}

async function call(url: string, token: string, method: string, path: string, data?: unknown): Promise<Page & { body: Record<string, unknown> }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { "X-Auth-Token": token, ...(data === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(data === undefined ? {} : { body: JSON.stringify({ data }) }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  return { status: res.status, data: body.data as Row[], ...(typeof body.next_start_key === "string" ? { next_start_key: body.next_start_key } : {}), body };
}

async function login(url: string, username = "admin"): Promise<{ token: string; accountId: string; ownerId: string }> {
  const res = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials(username, DEMO_PASSWORD), account_name: "demo" } }),
  });
  const body = (await res.json()) as { auth_token: string; data: { account_id: string; owner_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id, ownerId: body.data.owner_id };
}

/** Every page of `query`, 3 rows at a time, followed by next_start_key. */
async function allPages(url: string, token: string, path: string, query: string): Promise<string[]> {
  const ids: string[] = [];
  let start: string | undefined;
  for (let n = 0; n < 100; n++) {
    const page = await call(url, token, "GET", `${path}?${query}&page_size=3${start === undefined ? "" : `&start_key=${encodeURIComponent(start)}`}`);
    expect(page.status).toBe(200);
    ids.push(...page.data.map((d) => d.id));
    start = page.next_start_key;
    if (start === undefined) break;
  }
  return ids;
}

/** The ids of the devices of `type` in the unfiltered, unpaged list, in its order. */
async function ofType(url: string, token: string, path: string, type: string): Promise<string[]> {
  const all = await call(url, token, "GET", `${path}?paginate=false`);
  return all.data.filter((d) => d.device_type === type).map((d) => d.id);
}

describe("device list pages", () => {
  it("page a filtered list like the full list, through writes and a restart", async () => {
    let { url } = await start();
    let { token, accountId, ownerId } = await login(url);
    const devices = `/v2/accounts/${accountId}/devices`;
    for (let i = 0; i < 20; i++) {
      const made = await call(url, token, "PUT", devices, { name: `desk ${i}`, device_type: i % 3 === 0 ? "softphone" : "sip_device", ...(i % 4 === 0 ? { owner_id: ownerId } : {}) });
      expect(made.status).toBe(201);
    }
    const softphones = await ofType(url, token, devices, "softphone");
    expect(softphones.length).toBeGreaterThan(6);
    expect(await allPages(url, token, devices, "filter_device_type=softphone")).toEqual(softphones);
    expect(await allPages(url, token, devices, "filter_device_type=softphone&descending=true")).toEqual([...softphones].reverse());

    // Two of the test's own: the demo's softphones come back on a restart if deleted (the demo
    // account's documents are made again when missing).
    const desks = new Set((await call(url, token, "GET", `${devices}?paginate=false`)).data.filter((d) => d.name?.startsWith("desk ")).map((d) => d.id));
    const [first, second] = softphones.filter((id) => desks.has(id));
    if (first === undefined || second === undefined) throw new Error("too few softphones");
    expect((await call(url, token, "PATCH", `${devices}/${first}`, { device_type: "sip_device" })).status).toBe(200);
    expect((await call(url, token, "DELETE", `${devices}/${second}`)).status).toBe(200);
    const after = await allPages(url, token, devices, "filter_device_type=softphone");
    expect(after).toEqual(softphones.filter((id) => id !== first && id !== second));
    expect(await allPages(url, token, devices, "filter_device_type=sip_device")).toContain(first);

    // A user's devices walk the owner_id index: a device given to the user joins them at once.
    const owned = async (): Promise<string[]> => (await call(url, token, "GET", `/v2/accounts/${accountId}/users/${ownerId}/devices?paginate=false`)).data.map((d) => d.id);
    const before = await owned();
    // One the user does not own yet (ids are random, so which softphone came first is too).
    const stranger = (await allPages(url, token, devices, "filter_device_type=sip_device")).find((id) => !before.includes(id));
    if (stranger === undefined) throw new Error("every device is the user's");
    expect((await call(url, token, "PATCH", `${devices}/${stranger}`, { owner_id: ownerId })).status).toBe(200);
    expect(await owned()).toEqual([...before, stranger].sort());

    ({ url } = await start());
    ({ token, accountId, ownerId } = await login(url));
    expect(await allPages(url, token, devices, "filter_device_type=softphone")).toEqual(after);
    expect(await owned()).toEqual([...before, stranger].sort());
  });

  it("refuses another account's token, filtered or not", async () => {
    const api = await startApi();
    try {
      const { accountId } = await api.login();
      const elsewhere = await createAccount(api, `lists${Date.now()}`);
      for (const query of ["", "?filter_device_type=softphone&page_size=2"]) {
        expect((await api.call("GET", `/v2/accounts/${accountId}/devices${query}`, { token: elsewhere.token })).status).toBe(403);
      }
    } finally {
      await api.close();
    }
  });
});
