// The admin slice: whether the signed-in user is an admin, and the admin pages' data and actions:
// devices with their registrations (watched on a timer) and Sync, blocklists and which of them the
// account applies, webhooks with their attempts and re-enable, and queue membership. Each list is
// built on state/resource.ts (reading, changes, documents); this file keeps what is each one's own.
import type { StateCreator } from "zustand/vanilla";
import {
  httpAdminApi,
  type AdminApi,
  type Blocklist,
  type BlocklistRow,
  type DeviceRow,
  type HookKind,
  type QueueRow,
  type RecipientRow,
  type UserDoc,
  type Webhook,
  type WebhookAttempt,
  type WebhookRow,
} from "../api/admin.js";
import { apiErrorText } from "../api/error-text.js";
import { ApiRequestError } from "../api/client.js";
import { connectionOf } from "./account-connection.js";
import { emptyList, emptyResource, homeIn, resourceDocuments, resourceList, type ListState, type ResourceState } from "./resource.js";
import type { Clock } from "../clock.js";
import type { AppState } from "./store.js";

export type Privilege = "unknown" | "checking" | "admin" | "user" | "error";

export interface DevicesState extends ResourceState<DeviceRow> {
  /** Device id -> registered now. */
  registered: Record<string, boolean>;
  /** User id -> a readable name, for the Owner column. */
  owners: Record<string, string>;
  /** When the registrations were last read (clock ms); null before the first read. */
  checkedAt: number | null;
  /** Outcome of the last Sync per device. */
  sync: Record<string, "sending" | "sent" | "failed">;
}

export interface BlocklistsState extends ResourceState<BlocklistRow> {
  /** Ids the account document lists in `blacklists`: the lists in force. */
  applied: string[];
}

export interface WebhooksState extends ResourceState<WebhookRow> {
  kinds: HookKind[];
}

export interface AttemptsState extends ResourceState<WebhookAttempt> {
  /** The hook whose attempts are shown; null: every hook of the account. */
  hookId: string | null;
}

/** Its `pending` keys are "queue:user" pairs. */
export interface MembershipState extends ListState {
  queues: QueueRow[];
  recipients: RecipientRow[];
  /** Queue id -> member user ids. */
  members: Record<string, string[]>;
}

export interface PrivilegeCheck {
  /** The session token the check was for. */
  token: string | null;
  privilege: Privilege;
}

/**
 * The signed-in user's privilege as far as known: from the profile the connection slice reads at
 * sign-in, else from this slice's own check (the profile may have failed); "unknown" until then.
 */
export function privilegeOf(state: Pick<AppState, "session" | "profile" | "privilegeCheck">): Privilege {
  const { session, profile, privilegeCheck } = state;
  if (session === null) return "unknown";
  if (profile !== null && profile.id === session.ownerId) return profile.isAdmin ? "admin" : "user";
  return privilegeCheck.token === session.token ? privilegeCheck.privilege : "unknown";
}

export interface AdminSlice {
  privilegeCheck: PrivilegeCheck;
  devices: DevicesState;
  blocklists: BlocklistsState;
  webhooks: WebhooksState;
  attempts: AttemptsState;
  membership: MembershipState;

  /** Reads the signed-in user's priv_level when the profile does not tell (once per session unless `force`). */
  checkPrivilege(force?: boolean): Promise<Privilege>;

  loadDevices(): Promise<void>;
  /** Reads registrations now, on every register/deregister event, and every `everyMs`, until the answer is called. */
  watchRegistrations(everyMs?: number): () => void;
  syncDevice(id: string): Promise<boolean>;

  loadBlocklists(): Promise<void>;
  readBlocklist(id: string): Promise<Blocklist | string>;
  /** Creates or replaces; resolves null when saved, else the reason in words. */
  saveBlocklist(list: Blocklist): Promise<string | null>;
  deleteBlocklist(id: string): Promise<boolean>;
  setBlocklistApplied(id: string, applied: boolean): Promise<boolean>;

  loadWebhooks(): Promise<void>;
  readWebhook(id: string): Promise<Webhook | string>;
  saveWebhook(hook: Webhook): Promise<string | null>;
  deleteWebhook(id: string): Promise<boolean>;
  reenableWebhooks(): Promise<boolean>;
  loadAttempts(hookId: string | null): Promise<void>;

  loadMembership(): Promise<void>;
  setMembership(queueId: string, userId: string, member: boolean): Promise<boolean>;
}

export interface AdminDeps {
  adminApi?: AdminApi;
  clock: Clock;
}

export function displayName(user: UserDoc): string {
  const full = [user.first_name, user.last_name].filter((part) => typeof part === "string" && part !== "").join(" ");
  return full !== "" ? full : (user.username ?? user.id);
}

const byName = (a: { name?: string }, b: { name?: string }) => (a.name ?? "").localeCompare(b.name ?? "");

export function createAdminSlice(deps: AdminDeps): StateCreator<AppState, [], [], AdminSlice> {
  const api = deps.adminApi ?? httpAdminApi;

  return (set, get) => {
    const connection = () => connectionOf(get());
    const home = <K extends "devices" | "blocklists" | "webhooks" | "attempts" | "membership">(key: K) => homeIn(set, get, key, connection);

    const devices = resourceList(home("devices"), {
      many: "devices",
      async list(c) {
        const [rows, users] = await Promise.all([api.devices(c), api.users(c)]);
        const owners: Record<string, string> = {};
        for (const user of users) owners[user.id] = displayName(user);
        return { rows: rows.sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id)), owners };
      },
    });

    const blocklists = resourceList(home("blocklists"), {
      many: "blocklists",
      async list(c) {
        const [rows, applied] = await Promise.all([api.blocklists(c), api.appliedBlocklists(c)]);
        return { rows: rows.sort(byName), applied };
      },
    });
    const blocklistDocs = resourceDocuments(blocklists, {
      one: "blocklist",
      read: (c, id) => api.blocklist(c, id),
      prepare: (list) => (list.name.trim() === "" ? "Give the blocklist a name." : { ...list, name: list.name.trim() }),
      save: (c, list) => api.saveBlocklist(c, list),
      remove: (c, id) => api.deleteBlocklist(c, id),
      // A deleted list is no longer in force either.
      removed: (id) => blocklists.home.patch({ applied: get().blocklists.applied.filter((applied) => applied !== id) }),
    });

    const webhooks = resourceList(home("webhooks"), {
      many: "webhooks",
      async list(c) {
        const [rows, kinds] = await Promise.all([api.webhooks(c), api.hookKinds(c)]);
        return { rows: rows.sort(byName), kinds };
      },
    });
    const webhookDocs = resourceDocuments(webhooks, {
      one: "webhook",
      read: (c, id) => api.webhook(c, id),
      prepare(hook) {
        if (hook.name.trim() === "") return "Give the webhook a name.";
        if (hook.hook === "") return "Choose the event the webhook is for.";
        if (!/^https?:\/\/\S+$/i.test(hook.uri.trim())) return "Enter the address to call as http://… or https://….";
        if (hook.hook === "notifications" && (hook.custom_data?.type ?? "") === "") return "Choose the notification type.";
        return { ...hook, name: hook.name.trim(), uri: hook.uri.trim() };
      },
      save: (c, hook) => api.saveWebhook(c, hook),
      remove: (c, id) => api.deleteWebhook(c, id),
    });

    const attempts = resourceList(home("attempts"), {
      many: "attempts",
      list: async (c, state) => ({ rows: await api.webhookAttempts(c, state.hookId) }),
      // The rows shown may be another hook's: none is better than those.
      listFailed: (_error, words) => ({ rows: [], error: words }),
    });

    const membership = resourceList(home("membership"), {
      many: "queue membership",
      async list(c) {
        const [queues, recipients, entries] = await Promise.all([api.queues(c), api.recipients(c), api.queueMembership(c)]);
        const members: Record<string, string[]> = {};
        for (const entry of entries) members[entry.queue_id] = [...entry.members];
        return { queues: queues.sort(byName), recipients: recipients.sort(byName), members };
      },
      listFailed(error) {
        const missing = error instanceof ApiRequestError && error.kind === "http" && (error.status === 404 || error.status === 405);
        return {
          error: missing ? "This server does not offer call queues (no /callq_queues)." : `Queue membership could not be read: ${apiErrorText(error)}`,
        };
      },
    });

    async function readRegistrations(): Promise<void> {
      const c = connection();
      if (c === null) return;
      try {
        const registrations = await api.deviceRegistrations(c);
        const registered: Record<string, boolean> = {};
        for (const entry of registrations) if (entry.registered) registered[entry.device_id] = true;
        devices.home.patch({ registered, checkedAt: deps.clock.now(), error: null });
      } catch (error) {
        devices.home.patch({ error: `Registrations could not be read: ${apiErrorText(error)}` });
      }
    }

    const syncAs = (id: string, outcome: "sending" | "sent" | "failed") => devices.home.patch({ sync: { ...get().devices.sync, [id]: outcome } });

    return {
      privilegeCheck: { token: null, privilege: "unknown" },
      devices: { ...emptyResource<DeviceRow>(), registered: {}, owners: {}, checkedAt: null, sync: {} },
      blocklists: { ...emptyResource<BlocklistRow>(), applied: [] },
      webhooks: { ...emptyResource<WebhookRow>(), kinds: [] },
      attempts: { ...emptyResource<WebhookAttempt>(), hookId: null },
      membership: { ...emptyList(), queues: [], recipients: [], members: {} },

      async checkPrivilege(force = false) {
        const session = get().session;
        const c = connection();
        if (session === null || c === null) return "unknown";
        const known = privilegeOf(get());
        if (!force && (known === "admin" || known === "user" || known === "checking")) return known;
        const token = session.token;
        set({ privilegeCheck: { token, privilege: "checking" } });
        // A late answer for an earlier session, or overtaken by a newer check, is dropped.
        const current = () => get().privilegeCheck.token === token && get().privilegeCheck.privilege === "checking";
        try {
          const user = await api.user(c, session.ownerId);
          const privilege: Privilege = user.priv_level === "admin" ? "admin" : "user";
          if (current()) set({ privilegeCheck: { token, privilege } });
          return privilege;
        } catch {
          if (current()) set({ privilegeCheck: { token, privilege: "error" } });
          return "error";
        }
      },

      async loadDevices() {
        if (await devices.load()) await readRegistrations();
      },

      watchRegistrations(everyMs = 15_000) {
        let cancelTimer: (() => void) | null = null;
        let stopped = false;
        const tick = async () => {
          await readRegistrations();
          if (!stopped) cancelTimer = deps.clock.after(everyMs, () => void tick());
        };
        // A phone registering or leaving is an event: read at once rather than at the next tick.
        const stopListening = get().onPlatformEvent((event) => {
          if (!stopped && /^notification\.(register|deregister)\./.test(event.routingKey)) void readRegistrations();
        });
        void tick();
        return () => {
          stopped = true;
          cancelTimer?.();
          stopListening();
        };
      },

      syncDevice: (id) =>
        devices.change({
          failure: "Sync was not sent",
          show: () => syncAs(id, "sending"),
          work: async (c) => {
            await api.syncDevice(c, id);
            syncAs(id, "sent");
          },
          undo: () => syncAs(id, "failed"),
        }),

      async loadBlocklists() {
        await blocklists.load();
      },
      readBlocklist: blocklistDocs.read,
      saveBlocklist: blocklistDocs.save,
      deleteBlocklist: blocklistDocs.remove,

      setBlocklistApplied(id, applied) {
        const before = get().blocklists.applied;
        const others = before.filter((other) => other !== id);
        const wanted = applied ? [...others, id] : others;
        // The box shows the choice at once; a refusal puts it back.
        return blocklists.change({
          failure: "The account was not changed",
          show: () => blocklists.home.patch({ applied: wanted }),
          work: async (c) => {
            const now = await api.setAppliedBlocklists(c, wanted);
            blocklists.home.patch({ applied: now, notice: applied ? "Blocklist now in force." : "Blocklist no longer in force." });
          },
          undo: () => blocklists.home.patch({ applied: before }),
        });
      },

      async loadWebhooks() {
        await webhooks.load();
      },
      readWebhook: webhookDocs.read,
      saveWebhook: webhookDocs.save,
      deleteWebhook: webhookDocs.remove,

      reenableWebhooks: () =>
        webhooks.change({
          failure: "The webhooks were not re-enabled",
          work: async (c) => {
            const names = (await api.reenableWebhooks(c)).map((row) => row.name ?? row.id);
            webhooks.home.patch({ notice: names.length === 0 ? "No webhook was disabled." : `Re-enabled: ${names.join(", ")}.` });
            await webhooks.load();
          },
        }),

      async loadAttempts(hookId) {
        if (connection() === null) return;
        attempts.home.patch({ hookId });
        await attempts.load();
      },

      async loadMembership() {
        await membership.load();
      },

      setMembership(queueId, userId, member) {
        // The box shows the choice at once; a refusal puts it back.
        const place = (isMember: boolean) => {
          const members = get().membership.members;
          const others = (members[queueId] ?? []).filter((id) => id !== userId);
          membership.home.patch({ members: { ...members, [queueId]: isMember ? [...others, userId] : others } });
        };
        return membership.change({
          key: `${queueId}:${userId}`,
          failure: "Membership was not changed",
          show: () => place(member),
          work: (c) => api.changeMembership(c, queueId, member ? "add" : "remove", [userId]),
          undo: () => place(!member),
        });
      },
    };
  };
}
