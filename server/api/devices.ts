// /v2/accounts/{account_id}/devices: phones, softphones and other endpoints of an account.
// Defaults and list rows as the hosted service shapes them; SIP credentials generated when absent.
import type { FastifyInstance } from "fastify";
import { fieldError, type JsonSchema } from "../http/validation.js";
import { equalityIndexOn } from "../http/filters.js";
import type { AuthContext } from "../http/endpoint.js";
import { registerDocResource, view, type Data, type WriteCtx } from "../http/resource.js";
import { drawFree, ID_PATTERN, type StoredDoc, type UniqueIndexSpec } from "../store/index.js";
import type { ApiDeps } from "./deps.js";
import { syncOnWrite } from "./device-status.js";

export const DEVICE_TYPES = ["sip_device", "softphone", "cellphone", "smartphone", "landline", "fax", "sip_uri", "ata"] as const;
const CODECS_AUDIO = ["PCMU", "PCMA", "G722", "G729", "OPUS", "speex", "CELT"];
const CODECS_VIDEO = ["H261", "H263", "H264", "VP8", "VP9"];

const objectField = { type: "object" };

export const deviceSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    enabled: { type: "boolean" },
    device_type: { type: "string", enum: [...DEVICE_TYPES] },
    owner_id: { type: "string", pattern: ID_PATTERN.source },
    presence_id: { type: "string", minLength: 1, maxLength: 128 },
    exclude_from_queues: { type: "boolean" },
    do_not_disturb: { type: "object", properties: { enabled: { type: "boolean" } } },
    mac_address: { type: "string", pattern: "^(([0-9a-fA-F]{2}[:-]?){5}[0-9a-fA-F]{2})?$" },
    flags: { type: "array", items: { type: "string", maxLength: 64 } },
    call_restriction: objectField,
    caller_id: objectField,
    contact_list: objectField,
    dial_plan: objectField,
    music_on_hold: objectField,
    ringtones: objectField,
    call_recording: objectField,
    mwi_unsolicited_updates: { type: "boolean" },
    register_overwrite_notify: { type: "boolean" },
    suppress_unregister_notifications: { type: "boolean" },
    media: {
      type: "object",
      properties: {
        audio: { type: "object", properties: { codecs: { type: "array", items: { type: "string", enum: CODECS_AUDIO } } } },
        video: { type: "object", properties: { codecs: { type: "array", items: { type: "string", enum: CODECS_VIDEO } } } },
        encryption: {
          type: "object",
          properties: {
            enforce_security: { type: "boolean" },
            methods: { type: "array", items: { type: "string", enum: ["srtp", "zrtp"] } },
          },
        },
      },
    },
    sip: {
      type: "object",
      properties: {
        method: { type: "string", enum: ["password", "ip"] },
        invite_format: { type: "string", enum: ["contact", "username", "npan", "1npan", "e164", "route"] },
        registration_expiration: { type: "integer", minimum: 0, maximum: 86400 },
        username: { type: "string", minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9_.+-]+$" },
        password: { type: "string", minLength: 1, maxLength: 64 },
        ip: { type: "string", maxLength: 64 },
        realm: { type: "string", maxLength: 253 },
      },
    },
  },
};

/** SIP usernames are compared lower-case: registrars match them without regard to case. */
export const DEVICE_USERNAMES: UniqueIndexSpec = {
  field: "sip.username",
  description: "SIP username already in use",
  keys: (data) => {
    const username = (data.sip as Data | undefined)?.username;
    return typeof username === "string" ? [username.toLowerCase()] : [];
  },
};

/**
 * Random bytes in a generated SIP username: 64 bits, so that a clash is unlikely at any size an
 * account reaches; the draw is also checked against the taken names and made again on a clash.
 */
const USERNAME_BYTES = 8;

/**
 * The device as stored: defaults filled in and SIP credentials generated when absent. `taken`
 * says whether a SIP username (lower-case) is held by another device, so a drawn one never is.
 */
export function deviceDefaults(data: Data, hex: (bytes: number) => string, taken: (username: string) => boolean = () => false): Data {
  const media = (data.media ?? {}) as Data;
  const sip = (data.sip ?? {}) as Data;
  // The hosted service's misspelt key is accepted on input; the stored key is the correct one.
  const mwi = data.mwi_unsolicited_updates ?? data.mwi_unsolicitated_updates ?? true;
  const out: Data = {
    enabled: true,
    device_type: "sip_device",
    exclude_from_queues: false,
    register_overwrite_notify: false,
    suppress_unregister_notifications: false,
    call_restriction: {},
    caller_id: {},
    contact_list: {},
    dial_plan: {},
    music_on_hold: {},
    ringtones: {},
    ...data,
    mwi_unsolicited_updates: mwi,
    media: {
      ...media,
      audio: { codecs: ["PCMU"], ...(media.audio as Data | undefined) },
      video: { codecs: [], ...(media.video as Data | undefined) },
      encryption: { enforce_security: false, methods: [], ...(media.encryption as Data | undefined) },
    },
    sip: {
      method: "password",
      invite_format: "contact",
      registration_expiration: 300,
      ...sip,
      username: sip.username ?? drawFree(() => `user_${hex(USERNAME_BYTES)}`, taken, "SIP usernames"),
      password: sip.password ?? hex(12),
    },
  };
  delete out.mwi_unsolicitated_updates;
  // `sync` asks for a reboot of the phone on this write; it is an instruction, not a field.
  delete out.sync;
  return out;
}

export function deviceRow(doc: StoredDoc): Data {
  const d = doc.data;
  return {
    id: doc.id,
    name: d.name,
    username: (d.sip as Data | undefined)?.username,
    mac_address: d.mac_address ?? "",
    owner_id: d.owner_id,
    enabled: d.enabled,
    device_type: d.device_type,
    flags: d.flags ?? [],
  };
}

/**
 * Whether `auth` may see the device's SIP password: its owner, an admin, or the account's API key.
 * Anyone else holding it could register as the device and take its calls.
 */
export function seesDeviceSecrets(doc: StoredDoc, auth: AuthContext | null): boolean {
  if (auth === null) return false;
  return auth.isAdmin || (auth.ownerId !== null && doc.data.owner_id === auth.ownerId);
}

/** The device as shown to someone who is not its owner or an admin: the SIP password removed. */
export function withoutSecrets(shown: Data): Data {
  if (typeof shown.sip !== "object" || shown.sip === null) return shown;
  const { password: _password, ...sip } = shown.sip as Data;
  return { ...shown, sip };
}

export function registerDevices(app: FastifyInstance, deps: ApiDeps): void {
  deps.store.unique("devices", DEVICE_USERNAMES);
  // The console and provisioning list a user's devices, and devices of one type.
  deps.store.equalityIndex("devices", equalityIndexOn("owner_id"));
  deps.store.equalityIndex("devices", equalityIndexOn("device_type"));
  const hex = (bytes: number) => deps.store.random.bytes(bytes).toString("hex");
  registerDocResource(app, deps, {
    name: "devices",
    collection: "devices",
    schema: deviceSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: (data, ctx) => {
      const usernames = ctx.collection.uniqueIndex(DEVICE_USERNAMES);
      return deviceDefaults(data, hex, (username) => usernames.holder(username) !== undefined);
    },
    // The collection enforces the index on the write itself; this check only refuses early.
    check: async (data: Data, ctx: WriteCtx) => {
      if (ctx.collection.uniqueIndex(DEVICE_USERNAMES).clash(ctx.existing?.id, data)) {
        throw fieldError("sip.username", "unique", DEVICE_USERNAMES.description, (data.sip as Data).username);
      }
      if (typeof data.owner_id === "string") {
        const users = await deps.collection(ctx.accountId, "users");
        if (!users.has(data.owner_id)) throw fieldError("owner_id", "not_found", "no user with this id", data.owner_id);
      }
    },
    // `sync: true` on a write asks the phone to re-read its configuration (NOTIFY check-sync).
    afterWrite: (doc, ctx) => syncOnWrite(deps, doc, ctx),
    row: deviceRow,
    readAs: (doc, ctx) => (seesDeviceSecrets(doc, ctx.auth) ? undefined : { data: withoutSecrets(view(doc)), revision: doc.rev }),
  });
}
