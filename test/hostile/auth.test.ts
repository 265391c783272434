// Hostile logins (issue 14, item 1): spellings of one identity share one throttle key, and
// someone else's wrong passwords never keep the right one out, on the shared loopback address.
import { request } from "node:http";
import { networkInterfaces } from "node:os";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials, DEMO_PASSWORD, startApi, TestClock, type TestApi } from "../helpers/api.js";

const clock = new TestClock();
let api: TestApi;

beforeAll(async () => {
  api = await startApi({ clock });
});
afterAll(async () => {
  await api.close();
});

const userAuth = (names: Record<string, string>, username: string, password: string) =>
  api.call("PUT", "/v2/user_auth", { data: { credentials: credentials(username, password), ...names } });

/** "1001" with formatting and stray letters around and between its digits, as a clumsy script sends it. */
const spellingOf = (digits: string): fc.Arbitrary<string> =>
  fc
    .array(fc.constantFrom("", "-", " ", "(", ")", ".", "a", "x", "#"), { minLength: digits.length + 1, maxLength: digits.length + 1 })
    .map((junk) => (junk[0] ?? "") + [...digits].map((d, i) => d + (junk[i + 1] ?? "")).join(""))
    .filter((s) => s.length <= 32);

describe("the login throttle keys on the resolved identity", () => {
  it("counts 1-001, (1001), 1001a and the account's name and realm as one key: the sixth wrong attempt is 429 whatever the spelling", async () => {
    const spellings: Record<string, string>[] = [{ phone_number: "1-001" }, { phone_number: "(1001)" }, { phone_number: "1001a" }, { account_name: "DEMO" }, { account_realm: "Demo.Switchboard.Local" }];
    for (const names of spellings) expect((await userAuth(names, "agent1", "wrong")).status).toBe(401);
    await fc.assert(
      fc.asyncProperty(spellingOf("1001"), async (phone) => {
        const res = await userAuth({ phone_number: phone }, "agent1", "wrong");
        expect(res.status, phone).toBe(429);
        expect(res.body).toMatchObject({ status: "error", error: "429", message: "too_many_requests" });
        expect(Number(res.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }),
      { numRuns: 30, seed: 1401 },
    );
    // The account's own number of a queue resolves to the same account, so the same key.
    expect((await userAuth({ phone_number: "50-01" }, "agent1", "wrong")).status).toBe(429);
  });

  it("lets the right password in during the back-off, by any spelling, and answers the next wrong one 401 again", async () => {
    for (let i = 0; i < 8; i++) await userAuth({ account_name: "demo" }, "agent2", "wrong");
    expect((await userAuth({ account_name: "demo" }, "agent2", "wrong")).status).toBe(429);
    const right = await userAuth({ phone_number: "(1001)" }, "agent2", DEMO_PASSWORD);
    expect(right.status).toBe(201);
    // The token works.
    expect((await api.call("GET", "/v2/token_auth", { token: right.body.auth_token ?? "" })).status).toBe(200);
    expect((await userAuth({ account_name: "demo" }, "agent2", "wrong")).status).toBe(401);
  });

  it("keeps serving the right password while thirty wrong ones arrive at once from the same address", async () => {
    const flood = Array.from({ length: 30 }, (_, i) => userAuth({ phone_number: i % 2 ? "1-0-0-1" : "1001zz" }, "agent3", `wrong-${i}`));
    const right = userAuth({ account_name: "demo" }, "agent3", DEMO_PASSWORD);
    const [answers, rightAnswer] = await Promise.all([Promise.all(flood), right]);
    expect(rightAnswer.status).toBe(201);
    const statuses = answers.map((a) => a.status);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // However the right login fell among them, counting goes on: six more wrong ones end in 429.
    const after: number[] = [];
    for (let i = 0; i < 6; i++) after.push((await userAuth({ phone_number: "1001" }, "agent3", "wrong")).status);
    expect(after.at(-1)).toBe(429);
  });

  it("counts an identity that resolves to no account under its normalised text", async () => {
    for (const phone of ["9-999", "(9999)", "9999b", "99 99", "9.999"]) expect((await userAuth({ phone_number: phone }, "x", "y")).status).toBe(401);
    expect((await userAuth({ phone_number: "9999" }, "x", "y")).status).toBe(429);
    for (const name of ["Nowhere", "NOWHERE", "nowhere", "NoWhere", "nowHere"]) expect((await userAuth({ account_name: name }, "x", "y")).status).toBe(401);
    expect((await userAuth({ account_name: "NOWHERE" }, "x", "y")).status).toBe(429);
    // Neither touched the demo account's key.
    expect((await userAuth({ account_name: "demo" }, "agent1", DEMO_PASSWORD)).status).toBe(201);
  });

  it("slows wrong API keys but never the right one", async () => {
    const admin = await api.login("admin");
    const key = await api.call<{ api_key: string }>("GET", `/v2/accounts/${admin.accountId}/api_key`, { token: admin.token });
    for (let i = 0; i < 5; i++) expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: `wrong-${i}` } })).status).toBe(401);
    expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: "wrong-again" } })).status).toBe(429);
    expect((await api.call("PUT", "/v2/api_auth", { data: { api_key: key.body.data.api_key } })).status).toBe(201);
  });

  it("forgets the back-off once it is over", async () => {
    for (let i = 0; i < 6; i++) await userAuth({ account_realm: "demo.switchboard.local" }, "agent1", "wrong");
    const slowed = await userAuth({ account_realm: "demo.switchboard.local" }, "agent1", "wrong");
    expect(slowed.status).toBe(429);
    clock.advance(Number(slowed.headers.get("retry-after")) * 1000);
    expect((await userAuth({ account_realm: "demo.switchboard.local" }, "agent1", "wrong")).status).toBe(401);
  });
});

/** This machine's first address that is not loopback: connecting to it makes a non-loopback source. */
const outsideAddress = Object.values(networkInterfaces())
  .flat()
  .find((i) => i !== undefined && !i.internal && i.family === "IPv4")?.address;
if (outsideAddress === undefined) console.log("no non-loopback IPv4 address on this machine: the remote-source test is skipped");

describe.skipIf(outsideAddress === undefined)("a source that can be told apart", () => {
  let open: TestApi;
  beforeAll(async () => {
    open = await startApi({ config: { host: "0.0.0.0" } });
  });
  afterAll(async () => {
    await open.close();
  });

  /** A login sent to this machine's outside address, so the server sees it come from there. */
  const fromOutside = (username: string, password: string): Promise<number> =>
    new Promise((resolve, reject) => {
      const port = new URL(open.url).port;
      const body = JSON.stringify({ data: { credentials: credentials(username, password), account_name: "demo" } });
      const req = request(
        { host: outsideAddress, port, method: "PUT", path: "/v2/user_auth", headers: { Host: `127.0.0.1:${port}`, "Content-Type": "application/json" } },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  it("is refused unchecked once it has failed five times, while the same identity from elsewhere gets in", async () => {
    for (let i = 0; i < 5; i++) expect(await fromOutside("agent1", `guess-${i}`)).toBe(401);
    expect(await fromOutside("agent1", DEMO_PASSWORD)).toBe(429);
    const local = await open.call("PUT", "/v2/user_auth", { data: { credentials: credentials("agent1", DEMO_PASSWORD), account_name: "demo" } });
    expect(local.status).toBe(201);
  });
});
