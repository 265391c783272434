// /v2/accounts/{account_id}/users: the people of an account (logins, admins, queue agents) and
// the devices each one owns. A password arrives in clear and is kept only as Kazoo's md5/sha1.
import type { FastifyInstance } from "fastify";
import { credentialHashes } from "../auth/index.js";
import type { ApiError } from "../http/errors.js";
import { registerEndpoint } from "../http/endpoint.js";
import { isObject } from "../http/request.js";
import { listOutcome, notFound, registerDocResource, type Data, type WriteCtx } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import { drawFree, type Collection, type StoredDoc, type UniqueIndex, type UniqueIndexSpec } from "../store/index.js";
import type { RandomSource } from "../clock.js";
import type { ApiDeps } from "./deps.js";
import { deviceRow } from "./devices.js";

export const PRIV_LEVELS = ["admin", "user"] as const;
export const CALLQ_PERMISSIONS = ["call_monitor"] as const;

const personName = { type: "string", minLength: 1, maxLength: 128 };
const objectField = { type: "object" };
const booleanField = { type: "boolean" };

/** The longest auto-answer delay: past it an agent would answer by hand anyway. */
export const AUTO_ANSWER_MAX_DELAY_S = 30;

/** Local addition: the console answers queue offers by itself after `delay_s`, with a tone. */
export const AUTO_ANSWER_SCHEMA: JsonSchema = {
  type: "object",
  description: `local addition: the console answers queue offers by itself after delay_s seconds (0-${AUTO_ANSWER_MAX_DELAY_S}), with a tone`,
  properties: { enabled: booleanField, delay_s: { type: "integer", minimum: 0, maximum: AUTO_ANSWER_MAX_DELAY_S } },
};

export const userSchema: JsonSchema = {
  type: "object",
  // Kazoo's users need only a name: no username and no password make a user who cannot log in.
  required: ["first_name", "last_name"],
  properties: {
    username: { type: "string", minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9][A-Za-z0-9._@+-]*$" },
    first_name: personName,
    last_name: personName,
    email: { type: "string", format: "email", maxLength: 254 },
    priv_level: { type: "string", enum: [...PRIV_LEVELS] },
    enabled: { type: "boolean" },
    presence_id: { type: "string", minLength: 1, maxLength: 128 },
    caller_id: objectField,
    call_recording: objectField,
    call_restriction: objectField,
    contact_list: objectField,
    dial_plan: objectField,
    music_on_hold: objectField,
    profile: objectField,
    ringtones: objectField,
    require_password_update: booleanField,
    verified: booleanField,
    vm_to_email_enabled: booleanField,
    timezone: { type: "string", minLength: 1, maxLength: 64 },
    flags: { type: "array", items: { type: "string", maxLength: 64 } },
    hotdesk: {
      type: "object",
      properties: { enabled: booleanField, keep_logged_in_elsewhere: booleanField, require_pin: booleanField },
    },
    media: {
      type: "object",
      properties: {
        audio: { type: "object", properties: { codecs: { type: "array", items: { type: "string" } } } },
        video: { type: "object", properties: { codecs: { type: "array", items: { type: "string" } } } },
        encryption: { type: "object", properties: { enforce_security: booleanField, methods: { type: "array", items: { type: "string", enum: ["srtp", "zrtp"] } } } },
      },
    },
    do_not_disturb: { type: "object", properties: { enabled: booleanField } },
    auto_answer: AUTO_ANSWER_SCHEMA,
    callq: {
      type: "object",
      properties: {
        enabled: { type: "boolean" },
        pin: { type: "string", pattern: "^[0-9]{4,16}$" },
        permissions: { type: "array", uniqueItems: true, items: { type: "string", enum: [...CALLQ_PERMISSIONS] } },
      },
    },
  },
};

// The password is input only, so it is checked apart from the stored document's schema.
const passwordSchema: JsonSchema = {
  type: "object",
  properties: { password: { type: "string", minLength: 1, maxLength: 128 } },
};

/** `value` with `defaults` under it when it is an object; anything else is left for validation to name. */
function withDefaults(value: unknown, defaults: Data): unknown {
  if (value === undefined) return defaults;
  return isObject(value) ? { ...defaults, ...value } : value;
}

/**
 * Kazoo's defaults for a user: its users schema's and those of the document users.md shows after
 * a create. Hot-desking and voicemail are not served here; their keys say what Kazoo's would.
 */
const KAZOO_USER_DEFAULTS: Data = {
  call_restriction: {},
  caller_id: {},
  contact_list: {},
  dial_plan: {},
  music_on_hold: {},
  profile: {},
  ringtones: {},
  require_password_update: false,
  verified: false,
  vm_to_email_enabled: true,
};

function mediaWithDefaults(media: unknown): unknown {
  const given = withDefaults(media, {});
  if (!isObject(given)) return given;
  return {
    ...given,
    audio: withDefaults(given.audio, { codecs: ["PCMU"] }),
    video: withDefaults(given.video, { codecs: [] }),
    encryption: withDefaults(given.encryption, { enforce_security: false, methods: [] }),
  };
}

export function userDefaults(data: Data): Data {
  // `id` names the document, it is not one of its fields; clients send it back from a GET.
  // `sync` asks the user's phones to re-read their configuration on this write; not a field.
  const { password: _password, id: _id, sync: _sync, qubicle, ...rest } = data;
  // Qubicle's clients name the queue keys `qubicle`: they are stored as `callq`. Sent beside a
  // stored `callq` (a PATCH merges onto the document), the `qubicle` keys are the newer ones.
  const given = qubicle === undefined || rest.callq === undefined ? (rest.callq ?? qubicle) : isObject(qubicle) && isObject(rest.callq) ? { ...rest.callq, ...qubicle } : qubicle;
  const callq = given ?? {};
  return {
    priv_level: "user",
    enabled: true,
    ...structuredClone(KAZOO_USER_DEFAULTS),
    ...rest,
    hotdesk: withDefaults(rest.hotdesk, { enabled: false, keep_logged_in_elsewhere: false, require_pin: false }),
    media: mediaWithDefaults(rest.media),
    // A callq that is not an object is left as sent, so validation names it.
    callq: isObject(callq) ? { enabled: false, permissions: [], ...callq, ...enabledText(callq.enabled) } : callq,
  };
}

/**
 * Qubicle reads `enabled` as Kazoo's is_true does, and its quickstart guide sends the text "true":
 * the texts "true" and "false" are taken and stored as the boolean.
 */
function enabledText(enabled: unknown): Data {
  return enabled === "true" || enabled === "false" ? { enabled: enabled === "true" } : {};
}

/** Logins match usernames without regard to case. */
export const USERNAMES: UniqueIndexSpec = {
  field: "username",
  description: "username already in use",
  keys: (data) => (typeof data.username === "string" ? [data.username.toLowerCase()] : []),
};

/** A caller identifies with the pin alone (callq_recipient link_method pin), so it must be unambiguous. */
export const PINS: UniqueIndexSpec = {
  field: "callq.pin",
  description: "pin already in use by another user",
  keys: (data) => (isObject(data.callq) && typeof data.callq.pin === "string" ? [data.callq.pin] : []),
};

/**
 * Kazoo's generated username for a user given a password but no username: `user_` and 8
 * characters (about 41 bits), kept in that shape and drawn again while another user holds it.
 */
function generatedUsername(random: RandomSource, usernames: UniqueIndex): string {
  const draw = (): string => `user_${random.bytes(6).toString("base64url").toLowerCase().replace(/[^a-z0-9]/g, "0").slice(0, 8)}`;
  return drawFree(draw, (username) => usernames.holder(username) !== undefined, "usernames");
}

/**
 * The username as Kazoo's defaults settle it: kept when sent; on a write with a password but no
 * username, the stored one, else a generated one; with neither, none (the user cannot log in).
 */
function withUsername(data: Data, ctx: WriteCtx, random: RandomSource): Data {
  if (data.username !== undefined) return data;
  const stored = ctx.existing?.data.username;
  if (typeof stored === "string") return { ...data, username: stored };
  return passwordOf(ctx.input) === undefined ? data : { ...data, username: generatedUsername(random, ctx.collection.uniqueIndex(USERNAMES)) };
}

/** Whether `value` is an object whose `key` is true. */
function flagOn(value: unknown, key: string): boolean {
  return isObject(value) && value[key] === true;
}

/** The features Kazoo's user listing derives from the document, after those the user names. */
function userFeatures(d: Data): string[] {
  const features = Array.isArray(d.features) ? d.features.filter((f): f is string => typeof f === "string") : [];
  if (isObject(d.smartpbx)) {
    for (const [feature, settings] of Object.entries(d.smartpbx)) if (flagOn(settings, "enabled")) features.push(feature);
  }
  if (flagOn(d.hotdesk, "enabled")) features.push("hotdesk");
  if (flagOn(d.call_forward, "enabled")) features.push("call_forward");
  if (flagOn(d.call_forward, "failover") && !flagOn(d.call_forward, "enabled")) features.push("call_forward_failover");
  if (isObject(d.caller_id) && isObject(d.caller_id.external) && d.caller_id.external.number) features.push("caller_id");
  if (d.vm_to_email_enabled === true) features.push("vm_to_email");
  if (isObject(d.music_on_hold) && d.music_on_hold.media_id) features.push("music_on_hold");
  if (flagOn(d.do_not_disturb, "enabled")) features.push("do_not_disturb");
  return features;
}

/** Kazoo's listing row (features, timezone, flags) plus `enabled` and the user's queue flag. */
export function userRow(doc: StoredDoc): Data {
  const d = doc.data;
  return {
    id: doc.id,
    features: userFeatures(d),
    timezone: d.timezone,
    flags: d.flags ?? [],
    username: d.username,
    first_name: d.first_name,
    last_name: d.last_name,
    email: d.email,
    priv_level: d.priv_level,
    enabled: d.enabled,
    presence_id: d.presence_id,
    callq: { enabled: isObject(d.callq) && d.callq.enabled === true },
  };
}

function userSortKey(doc: StoredDoc): string {
  // NUL sorts before every character, so "Li" comes before "Lin" whatever the first names are.
  return `${String(doc.data.last_name ?? "")}\u0000${String(doc.data.first_name ?? "")}\u0000${doc.id}`.toLowerCase();
}

/** The clear password of this write, validated, or undefined when none was sent. */
function passwordOf(input: Data): string | undefined {
  const { password } = input;
  if (password === undefined || password === null) return undefined;
  validate(passwordSchema, { password });
  return String(password);
}

function isActiveAdmin(data: Data): boolean {
  return data.priv_level === "admin" && data.enabled !== false;
}

function hasOtherActiveAdmin(users: Collection, id: string): boolean {
  return users.all().some((u) => u.id !== id && isActiveAdmin(u.data));
}

function lastAdminError(field: string): ApiError {
  return fieldError(field, "last_admin", "the account's last enabled admin cannot be removed, disabled or demoted: nobody could manage the account");
}

export function registerUsers(app: FastifyInstance, deps: ApiDeps): void {
  deps.store.unique("users", USERNAMES);
  deps.store.unique("users", PINS);
  const check = (data: Data, ctx: WriteCtx): void => {
    const username = typeof data.username === "string" ? data.username.toLowerCase() : undefined;
    // The collection enforces both indexes on the write itself; these lookups only refuse early.
    if (ctx.collection.uniqueIndex(USERNAMES).clash(ctx.existing?.id, data)) throw fieldError("username", "unique", USERNAMES.description, data.username);
    if (ctx.collection.uniqueIndex(PINS).clash(ctx.existing?.id, data)) {
      throw fieldError("callq.pin", "unique", PINS.description, isObject(data.callq) ? data.callq.pin : undefined);
    }
    const password = passwordOf(ctx.input);
    if (password === undefined && username !== undefined) {
      const previous = ctx.existing ? String(ctx.existing.data.username ?? "").toLowerCase() : undefined;
      if (previous === undefined) throw fieldError("password", "required", "Field is required but missing");
      // The hashes cover lowercase(username):password, so a new username needs the password again.
      if (previous !== username) throw fieldError("password", "required", "a new username needs the password too");
    }
    if (ctx.existing && isActiveAdmin(ctx.existing.data) && !isActiveAdmin(data) && !hasOtherActiveAdmin(ctx.collection, ctx.existing.id)) {
      throw lastAdminError(data.priv_level === "admin" ? "enabled" : "priv_level");
    }
  };

  const passwordChanged = (ctx: WriteCtx): boolean => {
    const password = passwordOf(ctx.input);
    if (password === undefined || !ctx.existing) return false;
    const before = ctx.existing.data;
    return credentialHashes(String(before.username ?? ""), password).pvt_md5_auth !== before.pvt_md5_auth;
  };

  const unassignDevices = async (accountId: string, ownerId: string): Promise<void> => {
    const devices = await deps.collection(accountId, "devices");
    for (const device of devices.all()) {
      if (device.data.owner_id !== ownerId) continue;
      const { owner_id: _owner, ...rest } = device.data;
      await devices.update(device.id, rest);
    }
  };

  /** A deleted user leaves every queue they were a member of. */
  const leaveQueues = async (accountId: string, userId: string): Promise<void> => {
    const queues = await deps.collection(accountId, "callq_queues");
    for (const queue of queues.all()) {
      const members = queue.data.members;
      if (typeof members !== "object" || members === null || !(userId in members)) continue;
      const { [userId]: _gone, ...rest } = members as Record<string, unknown>;
      await queues.update(queue.id, { ...queue.data, members: rest });
    }
  };

  registerDocResource(
    app,
    deps,
    {
      name: "users",
      collection: "users",
      schema: userSchema,
      verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
      adminWrites: true,
      prepare: (data, ctx) => withUsername(userDefaults(data), ctx, deps.store.random),
      check,
      privateFields: (data, ctx) => {
        const password = passwordOf(ctx.input);
        return password === undefined || typeof data.username !== "string" ? {} : { ...credentialHashes(data.username, password) };
      },
      afterWrite: async (doc, ctx) => {
        // A disabled user or a changed password must not leave a session working.
        if (doc.data.enabled === false || passwordChanged(ctx)) await deps.auth.tokens.revokeOwner(ctx.accountId, doc.id);
        // Kazoo's `sync: true` on a user: check-sync to each of the user's registered devices.
        if (ctx.input.sync === true) {
          for (const device of (await deps.collection(ctx.accountId, "devices")).all()) {
            if (device.data.owner_id === doc.id) deps.sip?.checkSync(ctx.accountId, device.id);
          }
        }
      },
      // The check and the in-memory delete run in one turn of the event loop, so two concurrent
      // deletes of the last two admins cannot both pass.
      beforeDelete: (doc, ctx) => {
        if (isActiveAdmin(doc.data) && !hasOtherActiveAdmin(ctx.collection, doc.id)) throw lastAdminError("priv_level");
      },
      afterDelete: async (doc, ctx) => {
        await deps.auth.tokens.revokeOwner(ctx.accountId, doc.id);
        // Devices check that their owner exists; a dangling owner_id would make them uneditable.
        await unassignDevices(ctx.accountId, doc.id);
        await leaveQueues(ctx.accountId, doc.id);
      },
      row: userRow,
      sortKey: userSortKey,
    },
  );

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/devices",
    access: "account",
    tag: "users",
    verbs: {
      GET: {
        summary: "List the devices a user owns",
        handler: async (ctx) => {
          const accountId = ctx.params.account_id ?? "";
          const id = ctx.params.id ?? "";
          if (!(await deps.collection(accountId, "users")).has(id)) throw notFound(id);
          // Kazoo marks devices a user is hot-desked into; hot-desking is not served, so none is.
          return listOutcome(await deps.collection(accountId, "devices"), ctx, {
            row: (d) => ({ ...deviceRow(d), hotdesked: false }),
            where: (d) => d.data.owner_id === id,
            // The devices' owner_id index walks only this user's devices.
            equal: { field: "owner_id", value: id },
          });
        },
      },
    },
  });
}
