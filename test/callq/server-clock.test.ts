// startServer gives the queue engine the server's clock: with a manual one, a recipient whose
// queue device unregistered loses their offers when that clock has moved on by the device grace
// (10 s by default), not when 10 s of real time have passed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../server/clock-control.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";
import { newDevice, SipPhone, SipSocket } from "../helpers/sip-client.js";

const GRACE_MS = 10_000;

interface Status {
  available: boolean;
  availability_state: string;
  unavailable_reason?: string;
}

const clock = new ManualClock(Date.now());
let api: TestApi;
let socket: SipSocket | undefined;

beforeAll(async () => {
  api = await startApi({ clock });
});
afterAll(async () => {
  await socket?.close().catch(() => undefined);
  await api?.close();
});

describe("the queue engine on the server's clock", () => {
  it("starts a recipient's device grace on the clock startServer was given", async () => {
    const auth = await api.login("admin");
    const users = await api.call<{ id: string; username: string }[]>("GET", `/v2/accounts/${auth.accountId}/users`, { token: auth.token, query: { paginate: "false" } });
    const agent = users.body.data.find((u) => u.username === "agent3")?.id ?? "";
    const path = `/v2/accounts/${auth.accountId}/callq_recipients/${agent}`;
    const statusOf = async (): Promise<Status> => (await api.call<Status>("GET", `${path}/status`, { token: auth.token })).body.data;
    const device = await newDevice(api, auth, { owner_id: agent });
    socket = await SipSocket.connect(api.url);
    const phone = new SipPhone(socket, { ...device, realm: "demo.switchboard.local" });
    expect((await phone.register({ expires: 300 })).status).toBe(200);
    expect((await api.call("POST", path, { token: auth.token, data: { action: "login_ready" } })).status).toBe(200);
    expect(await statusOf()).toMatchObject({ availability_state: "Ready", available: true });

    // The store's idle snapshots run now, so the only timer the unregistering adds is the grace.
    await clock.advance(1_000);
    const before = clock.pending();
    expect((await phone.unregister()).status).toBe(200);
    await poll("the device grace to start", () => (clock.pending() > before ? true : undefined));

    await clock.advance(GRACE_MS - 1);
    expect(await statusOf()).toMatchObject({ available: true });
    await clock.advance(1);
    expect(await statusOf()).toMatchObject({ availability_state: "Ready", available: false, unavailable_reason: "no_device" });
  });
});
