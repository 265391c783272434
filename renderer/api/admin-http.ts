// The admin pages' calls over HTTP (the AdminApi of ./admin.ts), in a module of their own so that
// they load with the first admin request rather than with the sign-in screen. Blacklists and
// webhooks are crossbar document collections alike (`documentApi`); the rest are each their own call.
import { accountList, accountRequest, type AccountConnection } from "./account.js";
import type {
  AdminApi,
  Blocklist,
  BlocklistRow,
  DeviceRegistration,
  DeviceRow,
  HookKind,
  QueueMembership,
  QueueRow,
  RecipientRow,
  UserDoc,
  Webhook,
  WebhookAttempt,
  WebhookRow,
} from "./admin.js";
import { ApiClient } from "./client.js";

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

export const httpAdminCalls: AdminApi = {
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
