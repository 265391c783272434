// Registrations reach the bus: a new binding publishes notification.register.<device_id>, a
// refresh publishes nothing, and an ended binding (un-REGISTER or socket closed)
// notification.deregister.<device_id> with its reason; a notifications webhook can watch them.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BusEvent } from "../../server/events/index.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { newDevice, SipPhone, SipSocket } from "../helpers/sip-client.js";

const REALM = "demo.switchboard.local";
let api: TestApi;
let token: string;
let accountId: string;
const seen: BusEvent[] = [];

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
  api.server.events.bus.subscribe((e) => {
    if (e.routing_key.startsWith("notification.")) seen.push(e);
  });
});
afterAll(async () => {
  await api.close();
});

const until = async (test: () => boolean): Promise<void> => {
  for (let i = 0; i < 100 && !test(); i++) await new Promise((r) => setTimeout(r, 20));
};

describe("registration events", () => {
  it("publishes register once per new binding and deregister when it ends", async () => {
    const d = await newDevice(api, { token, accountId });
    const socket = await SipSocket.connect(api.url);
    const phone = new SipPhone(socket, { ...d, realm: REALM });
    expect((await phone.register({ expires: 300 })).status).toBe(200);
    expect((await phone.register({ expires: 300 })).status).toBe(200);
    const mine = () => seen.filter((e) => e.data.device_id === d.id);
    expect(mine().map((e) => e.routing_key)).toEqual([`notification.register.${d.id}`]);
    expect(mine()[0]?.data).toMatchObject({ type: "register", account_id: accountId, device_id: d.id, username: d.username, realm: REALM });
    expect(mine()[0]?.account_id).toBe(accountId);

    expect((await phone.unregister()).status).toBe(200);
    expect(mine().map((e) => e.name)).toEqual(["register", "deregister"]);
    expect(mine()[1]?.data.reason).toBe("unregistered");

    expect((await phone.register({ expires: 300 })).status).toBe(200);
    await socket.close();
    await until(() => mine().length === 4);
    expect(mine().map((e) => e.name)).toEqual(["register", "deregister", "register", "deregister"]);
    expect(mine()[3]?.data.reason).toBe("flow_closed");
  });
});
