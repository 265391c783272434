// The /v2 calls the console makes once signed in: who the user is, their softphone devices and
// SIP realm, their recent calls (CDRs) and commands on a live call leg. Answers are checked and
// reduced to the fields the console uses, so a hosted service's extra fields never break it.
import { ApiClient, ApiRequestError, isRecord, type ApiClientOptions } from "./client.js";
import { gregorianToMs } from "./gregorian.js";

export interface UserProfile {
  id: string;
  username: string;
  firstName: string;
  lastName: string;
  isAdmin: boolean;
  /** Has `call_monitor` among its permissions (supervisors): may listen, whisper and barge. */
  canMonitor: boolean;
  /** An admin, or `training.trainer` in the user's document: may write, preview and run training scenarios. */
  isTrainer: boolean;
  /** The user's extension, when it has one. */
  presenceId: string;
}

export interface DeviceSummary {
  id: string;
  name: string;
  deviceType: string;
  enabled: boolean;
}

export interface SipCredentials {
  username: string;
  password: string;
  /** The realm the device registers in: its own, else the account's. */
  realm: string;
}

export interface DirectoryEntry {
  id: string;
  name: string;
  /** What to dial to reach them; "" when they have no extension. */
  extension: string;
}

/** One leg's record of a finished call, as the recent-calls list shows it. */
export interface CallRecord {
  id: string;
  direction: "inbound" | "outbound";
  /** The other party, as seen from this user's leg. */
  otherName: string;
  otherNumber: string;
  /** Epoch ms of the call's start. */
  startedAt: number;
  durationS: number;
  answered: boolean;
  hangupCause: string;
  /** `sip:NNN`, "" when the record has none. */
  hangupCode: string;
}

export type TransferType = "blind" | "attended";

export interface PlatformApi {
  user(userId: string): Promise<UserProfile>;
  /** The user's devices, softphones first. */
  devicesOf(ownerId: string): Promise<DeviceSummary[]>;
  sipCredentials(deviceId: string): Promise<SipCredentials>;
  /** The account's users with an extension, for transfers. */
  directory(): Promise<DirectoryEntry[]>;
  /** The user's newest call records, newest first. */
  recentCalls(userId: string, count: number): Promise<CallRecord[]>;
  /** The uuids (SIP Call-IDs) of the user's live call legs, as the server has them now. */
  liveCallIds(userId: string): Promise<string[]>;
  /** A channel command on the call leg whose uuid is the SIP Call-ID. */
  transfer(callId: string, request: { target: string; type: TransferType; takebackDtmf?: string }): Promise<void>;
  /** The channels API's merge: the party of the leg `targetCallId` joins the call of `callId`, and `targetCallId` ends. */
  merge(callId: string, targetCallId: string): Promise<void>;
}

export interface PlatformApiOptions extends ApiClientOptions {
  accountId: string;
}


export function createPlatformApi(options: PlatformApiOptions): PlatformApi {
  const client = new ApiClient(options);
  const account = `/v2/accounts/${encodeURIComponent(options.accountId)}`;
  const get = async (path: string): Promise<unknown> => (await client.request<unknown>("GET", account + path)).data;

  return {
    async user(userId) {
      const data = record(await get(`/users/${encodeURIComponent(userId)}`), "user");
      const permissions = arrayOf(isRecord(data["callq"]) ? data["callq"]["permissions"] : undefined);
      return {
        id: text(data, "id") || userId,
        username: text(data, "username"),
        firstName: text(data, "first_name"),
        lastName: text(data, "last_name"),
        isAdmin: data["priv_level"] === "admin",
        canMonitor: data["priv_level"] === "admin" || permissions.includes("call_monitor"),
        isTrainer: data["priv_level"] === "admin" || (isRecord(data["training"]) && data["training"]["trainer"] === true),
        presenceId: text(data, "presence_id"),
      };
    },

    async devicesOf(ownerId) {
      const rows = list(await get(`/devices?filter_owner_id=${encodeURIComponent(ownerId)}&page_size=100`), "devices");
      const devices = rows.map((row) => ({
        id: text(row, "id"),
        name: text(row, "name") || text(row, "id"),
        deviceType: text(row, "device_type"),
        enabled: row["enabled"] !== false,
      }));
      return devices.filter((d) => d.id !== "").sort((a, b) => Number(b.deviceType === "softphone") - Number(a.deviceType === "softphone"));
    },

    async sipCredentials(deviceId) {
      const device = record(await get(`/devices/${encodeURIComponent(deviceId)}`), "device");
      const sip = isRecord(device["sip"]) ? device["sip"] : {};
      let realm = text(sip, "realm");
      if (realm === "") realm = text(record(await get(""), "account"), "realm");
      const username = text(sip, "username");
      const password = text(sip, "password");
      if (username === "" || password === "" || realm === "") {
        throw new ApiRequestError("malformed", 200, "", device, null, "the device has no SIP username, password or realm the console can use");
      }
      return { username, password, realm };
    },

    async directory() {
      const rows = list(await get("/users?page_size=500"), "users");
      return rows
        .map((row) => ({
          id: text(row, "id"),
          name: [text(row, "first_name"), text(row, "last_name")].filter((p) => p !== "").join(" ") || text(row, "username"),
          extension: text(row, "presence_id"),
        }))
        .filter((entry) => entry.extension !== "")
        .sort((a, b) => a.extension.localeCompare(b.extension, undefined, { numeric: true }));
    },

    async recentCalls(userId, count) {
      const rows = list(await get(`/users/${encodeURIComponent(userId)}/cdrs?page_size=${count}`), "cdrs");
      return rows.map(callRecord);
    },

    async liveCallIds(userId) {
      const rows = list(await get(`/users/${encodeURIComponent(userId)}/channels`), "channels");
      return rows.map((row) => text(row, "uuid")).filter((uuid) => uuid !== "");
    },

    async transfer(callId, request) {
      const body: Record<string, string> = { action: "transfer", target: request.target, "transfer-type": request.type };
      if (request.takebackDtmf !== undefined) body["takeback_dtmf"] = request.takebackDtmf;
      await client.request<unknown>("POST", `${account}/channels/${encodeURIComponent(callId)}`, { body });
    },

    async merge(callId, targetCallId) {
      const body = { action: "merge", target_call_id: targetCallId };
      await client.request<unknown>("POST", `${account}/channels/${encodeURIComponent(callId)}`, { body });
    },
  };
}

/** From this leg's point of view: on an inbound leg (the server calling us) the other party is the caller. */
export function callRecord(row: Record<string, unknown>): CallRecord {
  // The leg's direction is the server's: its "outbound" leg rang this user's phone, a call *to* us.
  const legDirection = text(row, "direction") || text(row, "call_direction");
  const toUs = legDirection === "outbound";
  const started = numberOf(row["timestamp"]);
  return {
    id: text(row, "id"),
    direction: toUs ? "inbound" : "outbound",
    otherName: toUs ? text(row, "caller_id_name") : text(row, "callee_id_name"),
    otherNumber: toUs ? text(row, "caller_id_number") : text(row, "callee_id_number"),
    startedAt: gregorianToMs(started),
    durationS: numberOf(row["billing_seconds"]),
    answered: numberOf(row["answered_timestamp"]) > 0 || numberOf(row["billing_seconds"]) > 0,
    hangupCause: text(row, "hangup_cause"),
    hangupCode: text(row, "hangup_code"),
  };
}

// Reading answers defensively; api/callq.ts reads its answers with the same helpers.

export function record(value: unknown, what: string): Record<string, unknown> {
  if (!isRecord(value)) throw new ApiRequestError("malformed", 200, "", value, null, `the ${what} is not an object`);
  return value;
}

export function list(value: unknown, what: string): Record<string, unknown>[] {
  if (!Array.isArray(value)) throw new ApiRequestError("malformed", 200, "", value, null, `the ${what} list is not an array`);
  return value.filter(isRecord);
}

export function text(data: Record<string, unknown>, key: string): string {
  const value = data[key];
  return typeof value === "string" ? value : typeof value === "number" ? String(value) : "";
}

export function numberOf(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function arrayOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}
