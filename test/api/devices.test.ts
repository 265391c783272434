import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeConformance } from "../helpers/conformance.js";
import { startApi, type TestApi } from "../helpers/api.js";

describeConformance({
  name: "devices",
  field: "name",
  adminWrites: true,
  valid: (n, { ownerId }) => ({ name: `desk phone ${n}`, owner_id: ownerId, device_type: "sip_device" }),
  invalid: [
    { title: "a missing name", data: { device_type: "softphone" }, field: "name", rule: "required" },
    { title: "an empty name", data: { name: "" }, field: "name", rule: "minLength" },
    { title: "a name over 128 characters", data: { name: "x".repeat(129) }, field: "name", rule: "maxLength" },
    { title: "an unknown device_type", data: { name: "d", device_type: "toaster" }, field: "device_type", rule: "enum" },
    { title: "a non-boolean enabled", data: { name: "d", enabled: "yes" }, field: "enabled", rule: "type" },
    { title: "a presence_id that is not a string", data: { name: "d", presence_id: 1001 }, field: "presence_id", rule: "type" },
    { title: "a negative registration expiry", data: { name: "d", sip: { registration_expiration: -1 } }, field: "sip.registration_expiration", rule: "minimum" },
    { title: "an unknown sip.method", data: { name: "d", sip: { method: "carrier-pigeon" } }, field: "sip.method", rule: "enum" },
    { title: "a SIP username in use", data: { name: "d", sip: { username: "agent1" } }, field: "sip.username", rule: "unique" },
    { title: "an owner that does not exist", data: { name: "d", owner_id: "0".repeat(32) }, field: "owner_id", rule: "not_found" },
  ],
});

describe("devices: the hosted service's shapes", () => {
  let api: TestApi;
  let token: string;
  let base: string;
  beforeAll(async () => {
    api = await startApi();
    const login = await api.login("admin");
    token = login.token;
    base = `/v2/accounts/${login.accountId}/devices`;
  });
  afterAll(async () => {
    await api.close();
  });

  it("fills the documented defaults and generates SIP credentials", async () => {
    const res = await api.call<Record<string, unknown>>("PUT", base, { token, data: { name: "bare" } });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      name: "bare",
      enabled: true,
      device_type: "sip_device",
      exclude_from_queues: false,
      register_overwrite_notify: false,
      suppress_unregister_notifications: false,
      media: { audio: { codecs: ["PCMU"] }, video: { codecs: [] }, encryption: { enforce_security: false, methods: [] } },
      sip: { method: "password", invite_format: "contact", registration_expiration: 300 },
      mwi_unsolicited_updates: true,
      call_restriction: {},
      caller_id: {},
      contact_list: {},
      dial_plan: {},
      music_on_hold: {},
      ringtones: {},
    });
    const sip = res.body.data.sip as { username: string; password: string };
    expect(sip.username).toMatch(/^user_[0-9a-f]{16}$/);
    expect(sip.password).toMatch(/^[0-9a-f]{24}$/);
  });

  it("accepts the misspelt mwi_unsolicitated_updates on input and the sync flag without storing it", async () => {
    const res = await api.call<Record<string, unknown>>("PUT", base, { token, data: { name: "mwi", mwi_unsolicitated_updates: false, sync: true } });
    expect(res.status).toBe(201);
    expect(res.body.data.mwi_unsolicited_updates).toBe(false);
    expect(res.body.data).not.toHaveProperty("mwi_unsolicitated_updates");
    expect(res.body.data).not.toHaveProperty("sync");
  });

  it("lists rows of {id, name, username, mac_address, owner_id, enabled, device_type, flags}", async () => {
    const res = await api.call<Record<string, unknown>[]>("GET", base, { token });
    const row = res.body.data.find((r) => r.name === "agent1 softphone");
    expect(row && Object.keys(row).sort()).toEqual(["device_type", "enabled", "flags", "id", "mac_address", "name", "owner_id", "username"]);
    expect(row?.username).toBe("agent1");
  });
});
