// Device secrets (issue 14, item 2): a device's SIP password is shown to its owner and admins
// only; another agent or a supervisor reads the device without it, cannot filter for it, and so
// cannot register as the device.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { SipPhone, SipSocket } from "../helpers/sip-client.js";

interface Device {
  id: string;
  name: string;
  owner_id?: string;
  sip: { username: string; password?: string; realm?: string };
}

let api: TestApi;
let accountId: string;
let admin: string;
let agent1: { token: string; ownerId: string };
let agent2: string;
let supervisor: string;
let devices: Device[];

beforeAll(async () => {
  api = await startApi();
  const a = await api.login("admin");
  accountId = a.accountId;
  admin = a.token;
  agent1 = await api.login("agent1");
  agent2 = (await api.login("agent2")).token;
  supervisor = (await api.login("supervisor")).token;
  const list = await api.call<{ id: string }[]>("GET", `/v2/accounts/${accountId}/devices`, { token: admin });
  devices = await Promise.all(
    list.body.data.map(async (row) => (await api.call<Device>("GET", `/v2/accounts/${accountId}/devices/${row.id}`, { token: admin })).body.data),
  );
});
afterAll(async () => {
  await api.close();
});

const agent1Device = (): Device => {
  const device = devices.find((d) => d.owner_id === agent1.ownerId);
  if (!device) throw new Error("agent1 has no device in the demo account");
  return device;
};
const read = (token: string, id: string) => api.call<Device>("GET", `/v2/accounts/${accountId}/devices/${id}`, { token });

describe("a device's SIP password", () => {
  it("is shown to the device's owner and to admins", async () => {
    const device = agent1Device();
    expect(device.sip.password).toEqual(expect.any(String));
    expect((await read(agent1.token, device.id)).body.data.sip.password).toBe(device.sip.password);
    expect((await read(admin, device.id)).body.data.sip.password).toBe(device.sip.password);
  });

  it("is removed for another agent and for a supervisor, who still see the rest of the device", async () => {
    const device = agent1Device();
    for (const token of [agent2, supervisor]) {
      const res = await read(token, device.id);
      expect(res.status).toBe(200);
      expect(res.body.data.sip).not.toHaveProperty("password");
      expect(res.body.data).toMatchObject({ id: device.id, name: device.name, sip: { username: device.sip.username } });
      expect(res.text).not.toContain(device.sip.password ?? "");
    }
  });

  it("is not in another agent's CSV of the device", async () => {
    const device = agent1Device();
    const csv = await api.call("GET", `/v2/accounts/${accountId}/devices/${device.id}`, { token: agent2, headers: { Accept: "text/csv" } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    expect(csv.text).not.toContain(device.sip.password ?? "");
  });

  it("cannot be guessed through list filters", async () => {
    const device = agent1Device();
    for (const token of [agent2, admin]) {
      const hit = await api.call<unknown[]>("GET", `/v2/accounts/${accountId}/devices`, { token, query: { "filter_sip.password": device.sip.password ?? "" } });
      expect(hit.status).toBe(200);
      expect(hit.body.data).toEqual([]);
    }
  });

  it("leaves another agent unable to register as the device with what they read", async () => {
    const device = agent1Device();
    const seen = (await read(agent2, device.id)).body.data;
    const socket = await SipSocket.connect(api.url);
    try {
      const realm = "demo.switchboard.local";
      const phone = new SipPhone(socket, { username: seen.sip.username, password: seen.sip.password ?? "", realm });
      const refused = await phone.register({ expires: 60 });
      expect(refused.status).toBe(403);
      // The owner, with the password they are shown, registers.
      const owner = new SipPhone(socket, { username: device.sip.username, password: (await read(agent1.token, device.id)).body.data.sip.password ?? "", realm });
      expect((await owner.register({ expires: 60 })).status).toBe(200);
      expect((await owner.unregister()).status).toBe(200);
    } finally {
      await socket.close();
    }
  });
});
