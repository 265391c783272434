// The endpoints behind the console's admin pages: the signed-in user's privilege, devices and their
// registrations, blocklists (and which ones the account applies), webhooks with their attempts, and
// queue membership (callq_queues / callq_recipients): what they ask of the server, and the HTTP
// calls that answer it, loaded from ./admin-http.ts with the first request.
import type { AccountConnection } from "./account.js";

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

/** The module of the HTTP calls, fetched with the first admin request rather than with the sign-in screen; the browser keeps it once loaded. */
const http = (): Promise<AdminApi> => import("./admin-http.js").then((module) => module.httpAdminCalls);

/** The admin calls over HTTP: each waits for the module that makes them. */
export const httpAdminApi: AdminApi = {
  user: async (...args) => (await http()).user(...args),
  users: async (...args) => (await http()).users(...args),
  devices: async (...args) => (await http()).devices(...args),
  deviceRegistrations: async (...args) => (await http()).deviceRegistrations(...args),
  syncDevice: async (...args) => (await http()).syncDevice(...args),
  blocklists: async (...args) => (await http()).blocklists(...args),
  blocklist: async (...args) => (await http()).blocklist(...args),
  saveBlocklist: async (...args) => (await http()).saveBlocklist(...args),
  deleteBlocklist: async (...args) => (await http()).deleteBlocklist(...args),
  appliedBlocklists: async (...args) => (await http()).appliedBlocklists(...args),
  setAppliedBlocklists: async (...args) => (await http()).setAppliedBlocklists(...args),
  hookKinds: async (...args) => (await http()).hookKinds(...args),
  webhooks: async (...args) => (await http()).webhooks(...args),
  webhook: async (...args) => (await http()).webhook(...args),
  saveWebhook: async (...args) => (await http()).saveWebhook(...args),
  deleteWebhook: async (...args) => (await http()).deleteWebhook(...args),
  reenableWebhooks: async (...args) => (await http()).reenableWebhooks(...args),
  webhookAttempts: async (...args) => (await http()).webhookAttempts(...args),
  queues: async (...args) => (await http()).queues(...args),
  recipients: async (...args) => (await http()).recipients(...args),
  queueMembership: async (...args) => (await http()).queueMembership(...args),
  changeMembership: async (...args) => (await http()).changeMembership(...args),
};
