// A list page's revision and ETag (server/http/resource.ts, PageAnswers) through the real server
// on a data directory of its own: the ETag changes after a write to a row on the page, after a
// delete, after a write elsewhere in the collection, and after a restart on the same data (no old
// ETag comes back with other content); If-None-Match with the page's ETag answers 304 with no body,
// with another ETag the page itself; a document read answers 304 to its own revision too. Answers
// with an ETag vary by the token's headers.
import { describe, expect, it } from "vitest";
import { credentials, DEMO_PASSWORD } from "../helpers/api.js";
import { restartableServer } from "../helpers/restartable-server.js";

const server = restartableServer("sb-list-etags-");

interface Answer {
  status: number;
  etag: string | null;
  vary: string | null;
  text: string;
  body: { data?: unknown; revision?: string } | null;
}

async function call(method: string, path: string, token: string, options: { data?: unknown; headers?: Record<string, string> } = {}): Promise<Answer> {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { "X-Auth-Token": token, ...(options.data === undefined ? {} : { "Content-Type": "application/json" }), ...options.headers },
    ...(options.data === undefined ? {} : { body: JSON.stringify({ data: options.data }) }),
  });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get("etag"), vary: res.headers.get("vary"), text, body: text === "" ? null : (JSON.parse(text) as Answer["body"]) };
}

async function start(): Promise<{ token: string; devices: string }> {
  const { url } = await server.start();
  const res = await fetch(`${url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials("admin", DEMO_PASSWORD), account_name: "demo" } }),
  });
  const body = (await res.json()) as { auth_token: string; data: { account_id: string } };
  return { token: body.auth_token, devices: `/v2/accounts/${body.data.account_id}/devices` };
}

function device(name: string, type: string): Record<string, unknown> {
  return { name, device_type: type, sip: { username: name.replace(/\W/g, ""), password: "0123456789abcdef01234567" } };
}

const PAGE = "?filter_device_type=softphone&page_size=3";

/** The page's answer, checked: a 200 whose ETag is its envelope's revision, quoted. */
async function page(devices: string, token: string, query = PAGE): Promise<Answer & { etag: string }> {
  const answer = await call("GET", `${devices}${query}`, token);
  expect(answer.status, answer.text).toBe(200);
  expect(answer.etag).toBe(`"${answer.body?.revision ?? ""}"`);
  return { ...answer, etag: answer.etag ?? "" };
}

describe("a list page's ETag", () => {
  it("changes with every write that may change the page, and a matching If-None-Match is answered 304", async () => {
    let { token, devices } = await start();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await call("PUT", devices, token, { data: device(`etag ${i}`, i === 4 ? "sip_device" : "softphone") });
      expect(created.status, created.text).toBe(201);
      ids.push((created.body?.data as { id: string }).id);
    }
    const seen = new Map<string, string>();
    /** Each ETag seen stands for one content only. */
    const remember = (answer: Answer & { etag: string }): void => {
      const data = JSON.stringify(answer.body?.data);
      const before = seen.get(answer.etag);
      if (before !== undefined) expect(data, `ETag ${answer.etag} came back with other rows`).toBe(before);
      seen.set(answer.etag, data);
    };

    const first = await page(devices, token);
    remember(first);
    expect(first.etag).toMatch(/^"[0-9a-f]{32}"$/);
    // Asked again (a kept page) and asked afresh by another query string: each is steady.
    const again = await page(devices, token);
    expect(again.etag).toBe(first.etag);
    const other = await page(devices, token, "?filter_device_type=softphone&page_size=2");
    expect(other.etag).not.toBe(first.etag);
    expect((await page(devices, token, "?filter_device_type=softphone&page_size=2")).etag).toBe(other.etag);

    // The client's copy is current: 304, no body; the ETag sent again. A list of tags, a weak one, *.
    for (const held of [first.etag, `W/${first.etag}`, `"nothing", ${first.etag}`, "*"]) {
      const notModified = await call("GET", `${devices}${PAGE}`, token, { headers: { "If-None-Match": held } });
      expect(notModified.status, held).toBe(304);
      expect(notModified.text).toBe("");
      expect(notModified.etag).toBe(first.etag);
    }
    const stale = await call("GET", `${devices}${PAGE}`, token, { headers: { "If-None-Match": '"0123456789abcdef0123456789abcdef"' } });
    expect(stale.status).toBe(200);
    expect(stale.body?.data).toEqual(first.body?.data);

    // A write to a row on the page.
    const onPage = (first.body?.data as { id: string }[])[0]?.id ?? "";
    expect((await call("PATCH", `${devices}/${onPage}`, token, { data: { name: "etag renamed" } })).status).toBe(200);
    const patched = await page(devices, token);
    expect(patched.etag).not.toBe(first.etag);
    remember(patched);
    expect((await call("GET", `${devices}${PAGE}`, token, { headers: { "If-None-Match": first.etag } })).status).toBe(200);
    expect((await call("GET", `${devices}${PAGE}`, token, { headers: { "If-None-Match": patched.etag } })).status).toBe(304);

    // A delete of a row on the page.
    expect((await call("DELETE", `${devices}/${onPage}`, token)).status).toBe(200);
    const deleted = await page(devices, token);
    expect(deleted.etag).not.toBe(patched.etag);
    remember(deleted);

    // A write to a device on no page of this query still gives a new ETag (weakly: it may have changed).
    const elsewhere = ids[4] ?? "";
    expect((await call("PATCH", `${devices}/${elsewhere}`, token, { data: { name: "etag elsewhere" } })).status).toBe(200);
    const afterElsewhere = await page(devices, token);
    expect(afterElsewhere.etag).not.toBe(deleted.etag);
    remember(afterElsewhere);

    // A restart on the same data: a new ETag, and no ETag of before matches.
    ({ token, devices } = await start());
    // (The rows may differ too: the demo account's start can add its own softphones.)
    const restarted = await page(devices, token);
    expect(seen.has(restarted.etag)).toBe(false);
    remember(restarted);
    expect((await call("GET", `${devices}${PAGE}`, token, { headers: { "If-None-Match": afterElsewhere.etag } })).status).toBe(200);

    // Writes after the restart bring the page's version back through the numbers it had before
    // (each start counts from its opening): still never an old ETag with other rows.
    for (let i = 0; i < 4; i++) {
      const created = await call("PUT", devices, token, { data: device(`etag after ${i}`, "softphone") });
      expect(created.status, created.text).toBe(201);
      const now = await page(devices, token);
      expect(seen.has(now.etag)).toBe(false);
      remember(now);
    }
  });

  it("a document read answers 304 to its own revision, and 200 once it changed", async () => {
    const { token, devices } = await start();
    const created = await call("PUT", devices, token, { data: device("etag doc", "softphone") });
    const id = (created.body?.data as { id: string }).id;
    const read = await call("GET", `${devices}/${id}`, token);
    expect(read.etag).toBe(`"${read.body?.revision ?? ""}"`);
    // A browser's cache keeps one caller's answer (its envelope names the token) for that caller only.
    expect(read.vary).toBe("X-Auth-Token, Authorization");
    expect((await page(devices, token)).vary).toBe("X-Auth-Token, Authorization");
    const notModified = await call("GET", `${devices}/${id}`, token, { headers: { "If-None-Match": read.etag ?? "" } });
    expect(notModified.status).toBe(304);
    expect(notModified.text).toBe("");
    // A tunnelled GET is a POST: never 304.
    const tunnelled = await call("POST", `${devices}/${id}?verb=GET`, token, { headers: { "If-None-Match": read.etag ?? "" } });
    expect(tunnelled.status, tunnelled.text).toBe(200);
    expect((await call("PATCH", `${devices}/${id}`, token, { data: { name: "etag doc b" } })).status).toBe(200);
    const changed = await call("GET", `${devices}/${id}`, token, { headers: { "If-None-Match": read.etag ?? "" } });
    expect(changed.status).toBe(200);
    expect(changed.etag).not.toBe(read.etag);
  });

  it("is the same for a list's first answer as for its next ones while nothing is written, even for a collection never written", async () => {
    const { token, devices } = await start();
    // blacklists: no document in a fresh data directory, so its collection is opened by this read.
    const blacklists = devices.replace(/devices$/, "blacklists");
    const first = await page(blacklists, token, "");
    const second = await page(blacklists, token, "");
    const third = await page(blacklists, token, "");
    expect([second.etag, third.etag]).toEqual([first.etag, first.etag]);
    const revalidated = await call("GET", blacklists, token, { headers: { "If-None-Match": first.etag } });
    expect(revalidated.status, revalidated.text).toBe(304);
  });
});
