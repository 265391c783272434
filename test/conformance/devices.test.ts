// Kazoo's devices.md, each example sent as written (its headers and body), checked for the
// documented status, envelope and data shape.
// Count: 12 examples in the document (11 requests and the ringtones body), plus the Quickcalls
// section, which points elsewhere and is tested as not served: 13 tests; 7 pass as documented,
// 6 are marked differs (sip.invite_format defaults to contact, as the spec and Kazoo's schema say,
// where the document's answers show username; sync answers 202 as the spec says; NOTIFY and
// quickcall are not served).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { curl as send, expectError, expectSuccess, type CurlResult } from "../helpers/kazoo-docs.js";
import { newDevice, SipPhone, SipSocket } from "../helpers/sip-client.js";

let api: TestApi;
let accountId: string;
let admin: string;
let agent: string;
let agentId: string;
let adminId: string;

function curl(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<CurlResult> {
  return send(api.url, method, path, headers, body);
}

const JSON_TYPE = { "Content-Type": "application/json" };

/** What every device document of the examples shows: Kazoo's defaults. */
const DEFAULTS = {
  call_restriction: {},
  caller_id: {},
  contact_list: {},
  dial_plan: {},
  enabled: true,
  exclude_from_queues: false,
  media: { audio: { codecs: ["PCMU"] }, encryption: { enforce_security: false, methods: [] }, video: { codecs: [] } },
  music_on_hold: {},
  mwi_unsolicited_updates: true,
  register_overwrite_notify: false,
  ringtones: {},
  suppress_unregister_notifications: false,
};

/** The sip object of a device made from a name alone: invite_format contact (the spec's default). */
const SIP_DEFAULTS = { invite_format: "contact", method: "password", registration_expiration: 300, username: expect.any(String), password: expect.any(String) };

/** "Create a new device" as written, returning the new device's id. */
async function createNewDevice(): Promise<string> {
  const res = await curl("PUT", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": admin, ...JSON_TYPE }, '{"data":{"name":"New Device"}}');
  expectSuccess(res, 201);
  return String((res.json.data as { id: string }).id);
}

/** "Change a device doc"'s body, as the document writes it (its `id` is another device's). */
const CHANGE_BODY = `{"data":{
        "name": "new device",
        "call_restriction": {},
        "caller_id": {},
        "contact_list": {},
        "dial_plan": {},
        "enabled": true,
        "exclude_from_queues": false,
        "media": {
            "audio": {"codecs": ["PCMU"]},
            "encryption": {"enforce_security": false, "methods": []},
            "video": {"codecs": []}
        },
        "music_on_hold": {},
        "mwi_unsolicited_updates": true,
        "register_overwrite_notify": false,
        "ringtones": {},
        "sip": {
            "invite_format": "username",
            "method": "password",
            "registration_expiration": 300
        },
        "suppress_unregister_notifications": false,
        "id": "4f3330e78e664bb57f8fb23fbaac2429"
        }}`;

/** The device the document's answer to "Change a device doc" shows. */
const CHANGED = { ...DEFAULTS, name: "new device", sip: { invite_format: "username", method: "password", registration_expiration: 300 } };

beforeAll(async () => {
  api = await startApi();
  ({ token: admin, accountId, ownerId: adminId } = await api.login("admin"));
  ({ token: agent, ownerId: agentId } = await api.login("agent1"));
});

afterAll(async () => {
  await api.close();
});

describe("devices.md", () => {
  it("devices.md › Fetch", async () => {
    await createNewDevice();
    // The document's curl line has `-X "X-Auth-Token: ..."`, a typo for -H: sent as the header.
    const res = await curl("GET", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    expect(res.json).toMatchObject({ auth_token: admin, page_size: expect.any(Number) });
    const rows = res.json.data as Record<string, unknown>[];
    expect(rows.length).toBe(res.json.page_size);
    for (const row of rows) {
      expect(row).toMatchObject({ device_type: expect.any(String), enabled: expect.any(Boolean), id: expect.stringMatching(/^[0-9a-f]{32}$/), mac_address: expect.any(String), name: expect.any(String) });
    }
    expect(rows.find((r) => r.name === "New Device")).toMatchObject({ device_type: "sip_device", enabled: true, mac_address: "" });
  });

  it("devices.md › Create a new device [differs: sip.invite_format defaults to contact]", async () => {
    const res = await curl("PUT", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": admin, ...JSON_TYPE }, '{"data":{"name":"New Device"}}');
    expectSuccess(res, 201, { ...DEFAULTS, id: expect.stringMatching(/^[0-9a-f]{32}$/), name: "New Device", sip: SIP_DEFAULTS });
    expect(res.json.auth_token).toBe(admin);
    // Writes to devices are admins'.
    expectError(await curl("PUT", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": agent, ...JSON_TYPE }, '{"data":{"name":"New Device"}}'), 403, "forbidden");
  });

  it("devices.md › Remove a device [differs: sip.invite_format defaults to contact]", async () => {
    const id = await createNewDevice();
    expectError(await curl("DELETE", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": agent }), 403, "forbidden");
    const res = await curl("DELETE", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { ...DEFAULTS, id, name: "New Device", sip: SIP_DEFAULTS });
    expectError(await curl("GET", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": admin }), 404, "bad_identifier", { cause: id });
  });

  it("devices.md › Fetch a device [differs: sip.invite_format defaults to contact]", async () => {
    const id = await createNewDevice();
    const res = await curl("GET", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": admin });
    expectSuccess(res, 200, { ...DEFAULTS, id, name: "New Device", sip: SIP_DEFAULTS });
    // An agent reads it too, but not its SIP password (it is not their device).
    const asAgent = await curl("GET", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": agent });
    expectSuccess(asAgent, 200, { ...DEFAULTS, id, name: "New Device" });
    expect((asAgent.json.data as { sip: Record<string, unknown> }).sip).not.toHaveProperty("password");
  });

  it("devices.md › Change a device doc", async () => {
    const id = await createNewDevice();
    const res = await curl("POST", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": admin, ...JSON_TYPE }, CHANGE_BODY);
    // The body's `id` names the document in Kazoo's answers, not this write: the path's id stays.
    expectSuccess(res, 200, { ...CHANGED, id });
    expectError(await curl("POST", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": agent, ...JSON_TYPE }, CHANGE_BODY), 403, "forbidden");
  });

  it("devices.md › Patch a device", async () => {
    const id = await createNewDevice();
    expectSuccess(await curl("POST", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": admin, ...JSON_TYPE }, CHANGE_BODY), 200);
    // As written: `-d` and no Content-Type, so curl sends its form type; Kazoo reads the JSON.
    const form = { "Content-Type": "application/x-www-form-urlencoded" };
    const res = await curl("PATCH", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": admin, ...form }, '{"data":{"presence_id":"dis_my_device"}}');
    expectSuccess(res, 200, { ...CHANGED, id, presence_id: "dis_my_device" });
    expectError(await curl("PATCH", `/v2/accounts/${accountId}/devices/${id}`, { "X-Auth-Token": agent, ...form }, '{"data":{"presence_id":"x"}}'), 403, "forbidden");
  });

  it("devices.md › Send a SIP NOTIFY to a device [differs: notify is not served]", async () => {
    const id = await createNewDevice();
    const res = await curl("POST", `/v2/accounts/${accountId}/devices/${id}/notify`, { "X-Auth-Token": admin, ...JSON_TYPE }, `{"action": "notify",
         "data": {
           "event": "event"
         }
        }`);
    expectError(res, 404, "not_found", { message: "not found" });
  });

  it("devices.md › Fetch registration statuses of all devices", async () => {
    const empty = await curl("GET", `/v2/accounts/${accountId}/devices/status`, { "X-Auth-Token": admin });
    expectSuccess(empty, 200);
    expect(empty.json.data).toEqual([]);
    const device = await newDevice(api, { token: admin, accountId });
    const socket = await SipSocket.connect(api.url);
    try {
      const phone = new SipPhone(socket, { ...device, realm: "demo.switchboard.local" });
      expect((await phone.register({ expires: 600 })).status).toBe(200);
      const res = await curl("GET", `/v2/accounts/${accountId}/devices/status`, { "X-Auth-Token": agent });
      expectSuccess(res, 200);
      expect(res.json.data).toEqual([{ device_id: device.id, registered: true }]);
    } finally {
      await socket.close();
    }
  });

  it("devices.md › Reboot a device [differs: 202, as the spec answers asynchronous actions]", async () => {
    const id = await createNewDevice();
    const res = await curl("POST", `/v2/accounts/${accountId}/devices/${id}/sync`, { "X-Auth-Token": admin });
    expectSuccess(res, 202);
    expect(res.json.data).toBe("sync request sent");
    expectError(await curl("POST", `/v2/accounts/${accountId}/devices/${id}/sync`, { "X-Auth-Token": agent }), 403, "forbidden");
  });

  it("devices.md › Quickcalls [differs: quickcall is not served]", async () => {
    const id = await createNewDevice();
    expectError(await curl("GET", `/v2/accounts/${accountId}/devices/${id}/quickcall/1000`, { "X-Auth-Token": admin }), 404, "not_found", { message: "not found" });
  });

  it("devices.md › Adding Ringtones", async () => {
    const body = JSON.stringify({ data: { name: "Device with custom ringtones", ringtones: { internal: "alert info SIP header", external: "alert info SIP header" } } });
    const res = await curl("PUT", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": admin, ...JSON_TYPE }, body);
    expectSuccess(res, 201, { name: "Device with custom ringtones", ringtones: { internal: "alert info SIP header", external: "alert info SIP header" } });
  });

  it("devices.md › Load a user's devices", async () => {
    const put = (name: string, owner: string) => curl("PUT", `/v2/accounts/${accountId}/devices`, { "X-Auth-Token": admin, ...JSON_TYPE }, JSON.stringify({ data: { name, owner_id: owner } }));
    const mine = (await put("USER_ID_DEVICE", agentId)).json.data as { id: string };
    await put("OWNER_ID_DEVICE", adminId);
    const res = await curl("GET", `/v2/accounts/${accountId}/users/${agentId}/devices`, { "X-Auth-Token": admin });
    expectSuccess(res, 200);
    const rows = res.json.data as Record<string, unknown>[];
    // Hot-desking is not served: a user's devices are those they own, none hot-desked.
    expect(rows.find((r) => r.id === mine.id)).toEqual(expect.objectContaining({ device_type: "sip_device", enabled: true, hotdesked: false, id: mine.id, mac_address: "", name: "USER_ID_DEVICE", owner_id: agentId }));
    for (const row of rows) expect(row).toMatchObject({ owner_id: agentId, hotdesked: false });
    expect(rows.some((r) => r.name === "OWNER_ID_DEVICE")).toBe(false);
  });

  it("devices.md › Create an Authn-By-IP Device", async () => {
    const res = await curl(
      "PUT",
      `/v2/accounts/${accountId}/devices`,
      { "X-Auth-Token": admin, ...JSON_TYPE },
      '{"data":{"enabled":true,"name":"authn_by_ip","sip":{"invite_format":"e164", "ip":"192.0.2.10","method":"ip"}}}',
    );
    expectSuccess(res, 201, { ...DEFAULTS, id: expect.any(String), name: "authn_by_ip", sip: { invite_format: "e164", ip: "192.0.2.10", method: "ip", registration_expiration: 300 } });
  });
});
