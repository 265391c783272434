// Uniqueness under load and under a bad random source: the devices' SIP usernames are held by a
// unique index the write itself consults, and a generated one is drawn again until it is free.
import { afterEach, describe, expect, it } from "vitest";
import { systemRandom, type RandomSource } from "../../server/clock.js";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/**
 * Every short draw (8 bytes or fewer: the size of a generated username's) comes out twice in a
 * row, counting up from all zeros; longer draws (ids, revisions, tokens) stay random.
 */
function repeatingRandom(): RandomSource {
  const draws = new Map<number, number>();
  return {
    bytes(n) {
      if (n > 8) return systemRandom.bytes(n);
      const count = draws.get(n) ?? 0;
      draws.set(n, count + 1);
      return Buffer.alloc(n, Math.floor(count / 2));
    },
  };
}

interface Device {
  id: string;
  sip: { username: string };
}

describe("unique writes", () => {
  it("lets exactly one of many concurrent creates of one SIP username through", async () => {
    api = await startApi();
    const { token, accountId } = await api.login("admin");
    const base = `/v2/accounts/${accountId}/devices`;
    const before = await api.call<unknown[]>("GET", base, { token });
    const client = api;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, n) => client.call<Device>("PUT", base, { token, data: { name: `racer ${n}`, sip: { username: n % 2 ? "Racer" : "racer" } } })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(400);
      expect(a.body.error).toBe("400");
      expect(a.body.data).toMatchObject({ "sip.username": { unique: { message: "SIP username already in use" } } });
    }
    const after = await api.call<unknown[]>("GET", base, { token });
    expect(after.body.data.length).toBe(before.body.data.length + 1);
  });

  it("never generates a SIP username already taken, even from a random source that repeats", async () => {
    api = await startApi({ config: { random: repeatingRandom() } });
    const { token, accountId } = await api.login("admin");
    const base = `/v2/accounts/${accountId}/devices`;
    // The first name the source will give, taken by a client in another case.
    const chosen = await api.call<Device>("PUT", base, { token, data: { name: "chosen", sip: { username: "USER_0000000000000000" } } });
    expect(chosen.status).toBe(201);
    const usernames = [chosen.body.data.sip.username.toLowerCase()];
    for (let n = 0; n < 4; n++) {
      const res = await api.call<Device>("PUT", base, { token, data: { name: `generated ${n}` } });
      expect(res.status).toBe(201);
      expect(res.body.data.sip.username).toMatch(/^user_[0-9a-f]{16}$/);
      usernames.push(res.body.data.sip.username);
    }
    expect(new Set(usernames).size).toBe(usernames.length);
  });

  it("never generates a user's login name already taken, even from a random source that repeats", async () => {
    api = await startApi({ config: { random: repeatingRandom() } });
    const { token, accountId } = await api.login("admin");
    const base = `/v2/accounts/${accountId}/users`;
    // Six zero bytes make the first generated name `user_aaaaaaaa`; a client holds it in capitals.
    const chosen = await api.call<{ username: string }>("PUT", base, { token, data: { first_name: "Chosen", last_name: "Person", username: "USER_AAAAAAAA", password: "pw-chosen" } });
    expect(chosen.status, chosen.text).toBe(201);
    const usernames = ["user_aaaaaaaa"];
    for (let n = 0; n < 3; n++) {
      const res = await api.call<{ username: string }>("PUT", base, { token, data: { first_name: `Generated ${n}`, last_name: "Person", password: `pw-${n}` } });
      expect(res.status, res.text).toBe(201);
      expect(res.body.data.username).toMatch(/^user_[a-z0-9]{8}$/);
      usernames.push(res.body.data.username);
    }
    expect(new Set(usernames).size).toBe(usernames.length);
  });
});
