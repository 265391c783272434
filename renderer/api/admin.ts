// The endpoints behind the console's admin pages: the signed-in user's privilege, devices and their
// registrations, blocklists (and which ones the account applies), webhooks with their attempts, and
// queue membership (callq_queues / callq_recipients). Blacklists and webhooks are crossbar document
// collections alike (`documentApi`); the rest are each their own call.
import { accountList, accountRequest, type AccountConnection } from "./account.js";
import { ApiClient } from "./client.js";

export interface UserDoc {
  id: string;
  username?: string;
  first_name?: string;
  last_name?: string;
  priv_level?: "admin" | "user";
  enabled?: boolean;
}

export interface DeviceRow {
  id: string;
  name?: string;
  username?: string;
  owner_id?: string;
  enabled?: boolean;
  device_type?: string;
}

export interface DeviceRegistration {
  device_id: string;
  registered: boolean;
}

export interface BlocklistRow {
  id: string;
  name?: string;
}

export interface Blocklist {
  id?: string;
  name: string;
  /** E.164 number -> {} (the server normalises what it is given). */
  numbers: Record<string, Record<string, unknown>>;
  should_block_anonymous: boolean;
}

export type WebhookVerb = "get" | "post";
export type WebhookFormat = "form-data" | "json";

export interface WebhookRow {
  id: string;
  hook?: string;
  name?: string;
  uri?: string;
  enabled?: boolean;
  disable_reason?: string;
}

export interface Webhook {
  id?: string;
  name: string;
  hook: string;
  uri: string;
  http_verb: WebhookVerb;
  retries: number;
  enabled: boolean;
  format: WebhookFormat;
  custom_data?: Record<string, string>;
  disable_reason?: string;
}

/** An entry of GET /v2/webhooks: the hooks a webhook may subscribe to. */
export interface HookKind {
  id: string;
  name?: string;
  description?: string;
}

export interface WebhookAttempt {
  hook_id?: string;
  result?: "success" | "failure";
  reason?: string;
  response_code?: string | number;
  try?: number;
  retries_left?: number;
  hook_event?: string;
  uri?: string;
  method?: string;
  /** Gregorian seconds. */
  timestamp?: number;
}

export interface QueueRow {
  id: string;
  name?: string;
}

export interface RecipientRow {
  id: string;
  name?: string;
}

export interface QueueMembership {
  queue_id: string;
  members: string[];
}

export type MembershipAction = "add" | "remove" | "set";

/** Everything the admin slice asks of the server, so tests can hand it a fake. */
export interface AdminApi {
  user(connection: AccountConnection, id: string): Promise<UserDoc>;
  users(connection: AccountConnection): Promise<UserDoc[]>;
  devices(connection: AccountConnection): Promise<DeviceRow[]>;
  deviceRegistrations(connection: AccountConnection): Promise<DeviceRegistration[]>;
  syncDevice(connection: AccountConnection, id: string): Promise<void>;

  blocklists(connection: AccountConnection): Promise<BlocklistRow[]>;
  blocklist(connection: AccountConnection, id: string): Promise<Blocklist>;
  saveBlocklist(connection: AccountConnection, list: Blocklist): Promise<Blocklist>;
  deleteBlocklist(connection: AccountConnection, id: string): Promise<void>;
  /** The ids in the account document's `blacklists`: the lists in force. */
  appliedBlocklists(connection: AccountConnection): Promise<string[]>;
  setAppliedBlocklists(connection: AccountConnection, ids: string[]): Promise<string[]>;

  hookKinds(connection: AccountConnection): Promise<HookKind[]>;
  webhooks(connection: AccountConnection): Promise<WebhookRow[]>;
  webhook(connection: AccountConnection, id: string): Promise<Webhook>;
  saveWebhook(connection: AccountConnection, hook: Webhook): Promise<Webhook>;
  deleteWebhook(connection: AccountConnection, id: string): Promise<void>;
  /** PATCH /webhooks {re-enable: true}: every auto-disabled hook runs again; answers those. */
  reenableWebhooks(connection: AccountConnection): Promise<WebhookRow[]>;
  /** One hook's attempts, or the account's when `hookId` is null; newest first. */
  webhookAttempts(connection: AccountConnection, hookId: string | null): Promise<WebhookAttempt[]>;

  queues(connection: AccountConnection): Promise<QueueRow[]>;
  recipients(connection: AccountConnection): Promise<RecipientRow[]>;
  queueMembership(connection: AccountConnection): Promise<QueueMembership[]>;
  changeMembership(connection: AccountConnection, queueId: string, action: MembershipAction, members: string[]): Promise<void>;
}

const id = (value: string) => encodeURIComponent(value);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A blocklist document as the server answers it, with the defaults the form needs. */
function toBlocklist(data: unknown): Blocklist {
  const doc = isRecord(data) ? data : {};
  const numbers = isRecord(doc.numbers) ? (doc.numbers as Record<string, Record<string, unknown>>) : {};
  return {
    ...(typeof doc.id === "string" ? { id: doc.id } : {}),
    name: typeof doc.name === "string" ? doc.name : "",
    numbers,
    should_block_anonymous: doc.should_block_anonymous === true,
  };
}

/** A webhook document as the server answers it, with the documented defaults filled in. */
function toWebhook(data: unknown): Webhook {
  const doc = isRecord(data) ? data : {};
  const custom = isRecord(doc.custom_data) ? doc.custom_data : undefined;
  const hook: Webhook = {
    name: typeof doc.name === "string" ? doc.name : "",
    hook: typeof doc.hook === "string" ? doc.hook : "",
    uri: typeof doc.uri === "string" ? doc.uri : "",
    http_verb: doc.http_verb === "get" ? "get" : "post",
    retries: typeof doc.retries === "number" ? doc.retries : 2,
    enabled: doc.enabled !== false,
    format: doc.format === "json" ? "json" : "form-data",
  };
  if (typeof doc.id === "string") hook.id = doc.id;
  if (custom !== undefined) {
    hook.custom_data = Object.fromEntries(Object.entries(custom).filter((entry): entry is [string, string] => typeof entry[1] === "string"));
  }
  if (typeof doc.disable_reason === "string") hook.disable_reason = doc.disable_reason;
  return hook;
}

/** The blocklist's fields a save sends. */
function blocklistBody(list: Blocklist): Record<string, unknown> {
  return { name: list.name, numbers: list.numbers, should_block_anonymous: list.should_block_anonymous };
}

/** The webhook's fields a save sends; custom data only when it has some. */
function webhookBody(hook: Webhook): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: hook.name,
    hook: hook.hook,
    uri: hook.uri,
    http_verb: hook.http_verb,
    retries: hook.retries,
    enabled: hook.enabled,
    format: hook.format,
  };
  if (hook.custom_data !== undefined && Object.keys(hook.custom_data).length > 0) body.custom_data = hook.custom_data;
  return body;
}

/** A crossbar document collection under the account: its rows, and each document read, saved, deleted. */
interface DocumentApi<Row, Doc> {
  list(connection: AccountConnection): Promise<Row[]>;
  read(connection: AccountConnection, id: string): Promise<Doc>;
  /** PUT on the collection without an id (create), POST on the document with one (replace). */
  save(connection: AccountConnection, doc: Doc): Promise<Doc>;
  remove(connection: AccountConnection, id: string): Promise<void>;
}

function documentApi<Row, Doc extends { id?: string }>(
  path: string,
  toDoc: (data: unknown) => Doc,
  toBody: (doc: Doc) => Record<string, unknown>,
): DocumentApi<Row, Doc> {
  return {
    list: (connection) => accountList<Row>(connection, path),
    async read(connection, docId) {
      return toDoc((await accountRequest<unknown>(connection, "GET", `${path}/${id(docId)}`)).data);
    },
    async save(connection, doc) {
      const envelope =
        doc.id === undefined
          ? await accountRequest<unknown>(connection, "PUT", path, toBody(doc))
          : await accountRequest<unknown>(connection, "POST", `${path}/${id(doc.id)}`, toBody(doc));
      return toDoc(envelope.data);
    },
    async remove(connection, docId) {
      await accountRequest<unknown>(connection, "DELETE", `${path}/${id(docId)}`);
    },
  };
}

const blocklistDocs = documentApi<BlocklistRow, Blocklist>("/blacklists", toBlocklist, blocklistBody);
const webhookDocs = documentApi<WebhookRow, Webhook>("/webhooks", toWebhook, webhookBody);

export const httpAdminApi: AdminApi = {
  async user(connection, userId) {
    const envelope = await accountRequest<UserDoc>(connection, "GET", `/users/${id(userId)}`);
    return envelope.data;
  },
  users: (connection) => accountList<UserDoc>(connection, "/users"),
  devices: (connection) => accountList<DeviceRow>(connection, "/devices"),
  async deviceRegistrations(connection) {
    const envelope = await accountRequest<DeviceRegistration[]>(connection, "GET", "/devices/status");
    return Array.isArray(envelope.data) ? envelope.data : [];
  },
  async syncDevice(connection, deviceId) {
    await accountRequest<unknown>(connection, "POST", `/devices/${id(deviceId)}/sync`, {});
  },

  blocklists: blocklistDocs.list,
  blocklist: blocklistDocs.read,
  saveBlocklist: blocklistDocs.save,
  deleteBlocklist: blocklistDocs.remove,
  async appliedBlocklists(connection) {
    const envelope = await accountRequest<unknown>(connection, "GET", "");
    return stringList(isRecord(envelope.data) ? envelope.data.blacklists : undefined);
  },
  async setAppliedBlocklists(connection, ids) {
    const envelope = await accountRequest<unknown>(connection, "PATCH", "", { blacklists: ids });
    return stringList(isRecord(envelope.data) ? envelope.data.blacklists : undefined);
  },

  async hookKinds(connection) {
    const client = new ApiClient({ baseUrl: connection.serverUrl, token: connection.token });
    const envelope = await client.request<HookKind[]>("GET", "/v2/webhooks?paginate=false");
    return Array.isArray(envelope.data) ? envelope.data : [];
  },
  webhooks: webhookDocs.list,
  webhook: webhookDocs.read,
  saveWebhook: webhookDocs.save,
  deleteWebhook: webhookDocs.remove,
  async reenableWebhooks(connection) {
    const envelope = await accountRequest<WebhookRow[]>(connection, "PATCH", "/webhooks", { "re-enable": true });
    return Array.isArray(envelope.data) ? envelope.data : [];
  },
  webhookAttempts: (connection, hookId) =>
    accountList<WebhookAttempt>(connection, hookId === null ? "/webhooks/attempts" : `/webhooks/${id(hookId)}/attempts`),

  queues: (connection) => accountList<QueueRow>(connection, "/callq_queues"),
  recipients: (connection) => accountList<RecipientRow>(connection, "/callq_recipients"),
  async queueMembership(connection) {
    const envelope = await accountRequest<QueueMembership[]>(connection, "GET", "/callq_queues/recipients");
    return Array.isArray(envelope.data) ? envelope.data : [];
  },
  async changeMembership(connection, queueId, action, members) {
    await accountRequest<unknown>(connection, "POST", `/callq_queues/${id(queueId)}/recipients`, { action, members });
  },
};

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];
}
