// The admin slice: whether the signed-in user is an admin, and the admin pages' data and actions:
// devices with their registrations (watched on a timer) and Sync, blocklists and which of them the
// account applies, webhooks with their attempts and re-enable, and queue membership.
import type { StateCreator } from "zustand/vanilla";
import type { AccountConnection } from "../api/account.js";
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
import type { Clock } from "../clock.js";
import type { AppState } from "./store.js";

export type Privilege = "unknown" | "checking" | "admin" | "user" | "error";

interface Loadable {
  loading: boolean;
  error: string | null;
}

export interface DevicesState extends Loadable {
  rows: DeviceRow[];
  /** Device id -> registered now. */
  registered: Record<string, boolean>;
  /** User id -> a readable name, for the Owner column. */
  owners: Record<string, string>;
  /** When the registrations were last read (clock ms); null before the first read. */
  checkedAt: number | null;
  /** Outcome of the last Sync per device. */
  sync: Record<string, "sending" | "sent" | "failed">;
}

export interface BlocklistsState extends Loadable {
  rows: BlocklistRow[];
  /** Ids the account document lists in `blacklists`: the lists in force. */
  applied: string[];
  notice: string | null;
}

export interface WebhooksState extends Loadable {
  rows: WebhookRow[];
  kinds: HookKind[];
  notice: string | null;
}

export interface AttemptsState extends Loadable {
  /** The hook whose attempts are shown; null: every hook of the account. */
  hookId: string | null;
  rows: WebhookAttempt[];
}

export interface MembershipState extends Loadable {
  queues: QueueRow[];
  recipients: RecipientRow[];
  /** Queue id -> member user ids. */
  members: Record<string, string[]>;
  /** "queue:user" pairs being changed now. */
  pending: string[];
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

const idle = { loading: false, error: null };

export function displayName(user: UserDoc): string {
  const full = [user.first_name, user.last_name].filter((part) => typeof part === "string" && part !== "").join(" ");
  return full !== "" ? full : (user.username ?? user.id);
}

export function createAdminSlice(deps: AdminDeps): StateCreator<AppState, [], [], AdminSlice> {
  const api = deps.adminApi ?? httpAdminApi;

  return (set, get) => {
    const patchDevices = (changes: Partial<DevicesState>) => set((s) => ({ devices: { ...s.devices, ...changes } }));
    const patchBlocklists = (changes: Partial<BlocklistsState>) => set((s) => ({ blocklists: { ...s.blocklists, ...changes } }));
    const patchWebhooks = (changes: Partial<WebhooksState>) => set((s) => ({ webhooks: { ...s.webhooks, ...changes } }));
    const patchAttempts = (changes: Partial<AttemptsState>) => set((s) => ({ attempts: { ...s.attempts, ...changes } }));
    const patchMembership = (changes: Partial<MembershipState>) => set((s) => ({ membership: { ...s.membership, ...changes } }));

    /** Runs `work` with the session's connection; undefined when signed out. */
    const withConnection = <T>(work: (connection: AccountConnection) => Promise<T>): Promise<T> | undefined => {
      const connection = connectionOf(get());
      return connection === null ? undefined : work(connection);
    };

    async function readRegistrations(connection: AccountConnection): Promise<void> {
      try {
        const registrations = await api.deviceRegistrations(connection);
        const registered: Record<string, boolean> = {};
        for (const entry of registrations) if (entry.registered) registered[entry.device_id] = true;
        patchDevices({ registered, checkedAt: deps.clock.now(), error: null });
      } catch (error) {
        patchDevices({ error: `Registrations could not be read: ${apiErrorText(error)}` });
      }
    }

    return {
      privilegeCheck: { token: null, privilege: "unknown" },
      devices: { ...idle, rows: [], registered: {}, owners: {}, checkedAt: null, sync: {} },
      blocklists: { ...idle, rows: [], applied: [], notice: null },
      webhooks: { ...idle, rows: [], kinds: [], notice: null },
      attempts: { ...idle, hookId: null, rows: [] },
      membership: { ...idle, queues: [], recipients: [], members: {}, pending: [] },

      async checkPrivilege(force = false) {
        const session = get().session;
        const connection = connectionOf(get());
        if (session === null || connection === null) return "unknown";
        const known = privilegeOf(get());
        if (!force && (known === "admin" || known === "user" || known === "checking")) return known;
        const token = session.token;
        set({ privilegeCheck: { token, privilege: "checking" } });
        // A late answer for an earlier session, or overtaken by a newer check, is dropped.
        const current = () => get().privilegeCheck.token === token && get().privilegeCheck.privilege === "checking";
        try {
          const user = await api.user(connection, session.ownerId);
          const privilege: Privilege = user.priv_level === "admin" ? "admin" : "user";
          if (current()) set({ privilegeCheck: { token, privilege } });
          return privilege;
        } catch {
          if (current()) set({ privilegeCheck: { token, privilege: "error" } });
          return "error";
        }
      },

      async loadDevices() {
        await withConnection(async (connection) => {
          patchDevices({ loading: true, error: null });
          try {
            const [rows, users] = await Promise.all([api.devices(connection), api.users(connection)]);
            const owners: Record<string, string> = {};
            for (const user of users) owners[user.id] = displayName(user);
            rows.sort((a, b) => (a.name ?? a.id).localeCompare(b.name ?? b.id));
            patchDevices({ rows, owners, loading: false });
          } catch (error) {
            patchDevices({ loading: false, error: `The devices could not be read: ${apiErrorText(error)}` });
            return;
          }
          await readRegistrations(connection);
        });
      },

      watchRegistrations(everyMs = 15_000) {
        let cancelTimer: (() => void) | null = null;
        let stopped = false;
        const readNow = async () => {
          const connection = connectionOf(get());
          if (connection !== null) await readRegistrations(connection);
        };
        const tick = async () => {
          await readNow();
          if (!stopped) cancelTimer = deps.clock.after(everyMs, () => void tick());
        };
        // A phone registering or leaving is an event: read at once rather than at the next tick.
        const stopListening = get().onPlatformEvent((event) => {
          if (!stopped && /^notification\.(register|deregister)\./.test(event.routingKey)) void readNow();
        });
        void tick();
        return () => {
          stopped = true;
          cancelTimer?.();
          stopListening();
        };
      },

      async syncDevice(id) {
        return (
          (await withConnection(async (connection) => {
            patchDevices({ sync: { ...get().devices.sync, [id]: "sending" } });
            try {
              await api.syncDevice(connection, id);
              patchDevices({ sync: { ...get().devices.sync, [id]: "sent" } });
              return true;
            } catch (error) {
              patchDevices({ sync: { ...get().devices.sync, [id]: "failed" }, error: `Sync was not sent: ${apiErrorText(error)}` });
              return false;
            }
          })) ?? false
        );
      },

      async loadBlocklists() {
        await withConnection(async (connection) => {
          patchBlocklists({ loading: true, error: null });
          try {
            const [rows, applied] = await Promise.all([api.blocklists(connection), api.appliedBlocklists(connection)]);
            rows.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
            patchBlocklists({ rows, applied, loading: false });
          } catch (error) {
            patchBlocklists({ loading: false, error: `The blocklists could not be read: ${apiErrorText(error)}` });
          }
        });
      },

      async readBlocklist(id) {
        const outcome = await withConnection(async (connection) => {
          try {
            return await api.blocklist(connection, id);
          } catch (error) {
            return `The blocklist could not be read: ${apiErrorText(error)}`;
          }
        });
        return outcome ?? "You are signed out.";
      },

      async saveBlocklist(list) {
        if (list.name.trim() === "") return "Give the blocklist a name.";
        const outcome = await withConnection(async (connection) => {
          try {
            const saved = await api.saveBlocklist(connection, { ...list, name: list.name.trim() });
            patchBlocklists({ notice: `Blocklist “${saved.name}” saved.` });
            await get().loadBlocklists();
            return null;
          } catch (error) {
            return `The blocklist was not saved: ${apiErrorText(error)}`;
          }
        });
        return outcome === undefined ? "You are signed out." : outcome;
      },

      async deleteBlocklist(id) {
        return (
          (await withConnection(async (connection) => {
            try {
              await api.deleteBlocklist(connection, id);
              set((s) => ({
                blocklists: {
                  ...s.blocklists,
                  rows: s.blocklists.rows.filter((row) => row.id !== id),
                  applied: s.blocklists.applied.filter((applied) => applied !== id),
                  notice: "Blocklist deleted.",
                },
              }));
              return true;
            } catch (error) {
              patchBlocklists({ error: `The blocklist was not deleted: ${apiErrorText(error)}` });
              return false;
            }
          })) ?? false
        );
      },

      async setBlocklistApplied(id, applied) {
        return (
          (await withConnection(async (connection) => {
            const before = get().blocklists.applied;
            const others = before.filter((other) => other !== id);
            const wanted = applied ? [...others, id] : others;
            // The box shows the choice at once; a refusal puts it back.
            patchBlocklists({ applied: wanted, error: null, notice: null });
            try {
              const now = await api.setAppliedBlocklists(connection, wanted);
              patchBlocklists({ applied: now, notice: applied ? "Blocklist now in force." : "Blocklist no longer in force." });
              return true;
            } catch (error) {
              patchBlocklists({ applied: before, error: `The account was not changed: ${apiErrorText(error)}` });
              return false;
            }
          })) ?? false
        );
      },

      async loadWebhooks() {
        await withConnection(async (connection) => {
          patchWebhooks({ loading: true, error: null });
          try {
            const [rows, kinds] = await Promise.all([api.webhooks(connection), api.hookKinds(connection)]);
            rows.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
            patchWebhooks({ rows, kinds, loading: false });
          } catch (error) {
            patchWebhooks({ loading: false, error: `The webhooks could not be read: ${apiErrorText(error)}` });
          }
        });
      },

      async readWebhook(id) {
        const outcome = await withConnection(async (connection) => {
          try {
            return await api.webhook(connection, id);
          } catch (error) {
            return `The webhook could not be read: ${apiErrorText(error)}`;
          }
        });
        return outcome ?? "You are signed out.";
      },

      async saveWebhook(hook) {
        if (hook.name.trim() === "") return "Give the webhook a name.";
        if (hook.hook === "") return "Choose the event the webhook is for.";
        if (!/^https?:\/\/\S+$/i.test(hook.uri.trim())) return "Enter the address to call as http://… or https://….";
        if (hook.hook === "notifications" && (hook.custom_data?.type ?? "") === "") return "Choose the notification type.";
        const outcome = await withConnection(async (connection) => {
          try {
            const saved = await api.saveWebhook(connection, { ...hook, name: hook.name.trim(), uri: hook.uri.trim() });
            patchWebhooks({ notice: `Webhook “${saved.name}” saved.` });
            await get().loadWebhooks();
            return null;
          } catch (error) {
            return `The webhook was not saved: ${apiErrorText(error)}`;
          }
        });
        return outcome === undefined ? "You are signed out." : outcome;
      },

      async deleteWebhook(id) {
        return (
          (await withConnection(async (connection) => {
            try {
              await api.deleteWebhook(connection, id);
              set((s) => ({ webhooks: { ...s.webhooks, rows: s.webhooks.rows.filter((row) => row.id !== id), notice: "Webhook deleted." } }));
              return true;
            } catch (error) {
              patchWebhooks({ error: `The webhook was not deleted: ${apiErrorText(error)}` });
              return false;
            }
          })) ?? false
        );
      },

      async reenableWebhooks() {
        return (
          (await withConnection(async (connection) => {
            try {
              const reenabled = await api.reenableWebhooks(connection);
              const names = reenabled.map((row) => row.name ?? row.id);
              patchWebhooks({
                error: null,
                notice: names.length === 0 ? "No webhook was disabled." : `Re-enabled: ${names.join(", ")}.`,
              });
              await get().loadWebhooks();
              return true;
            } catch (error) {
              patchWebhooks({ error: `The webhooks were not re-enabled: ${apiErrorText(error)}` });
              return false;
            }
          })) ?? false
        );
      },

      async loadAttempts(hookId) {
        await withConnection(async (connection) => {
          patchAttempts({ hookId, loading: true, error: null });
          try {
            const rows = await api.webhookAttempts(connection, hookId);
            // Only the answer for the hook still chosen lands.
            if (get().attempts.hookId === hookId) patchAttempts({ rows, loading: false });
          } catch (error) {
            if (get().attempts.hookId === hookId) {
              patchAttempts({ rows: [], loading: false, error: `The attempts could not be read: ${apiErrorText(error)}` });
            }
          }
        });
      },

      async loadMembership() {
        await withConnection(async (connection) => {
          patchMembership({ loading: true, error: null });
          try {
            const [queues, recipients, membership] = await Promise.all([
              api.queues(connection),
              api.recipients(connection),
              api.queueMembership(connection),
            ]);
            const members: Record<string, string[]> = {};
            for (const entry of membership) members[entry.queue_id] = [...entry.members];
            queues.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
            recipients.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? ""));
            patchMembership({ queues, recipients, members, loading: false });
          } catch (error) {
            const missing = error instanceof ApiRequestError && error.kind === "http" && (error.status === 404 || error.status === 405);
            patchMembership({
              loading: false,
              error: missing
                ? "This server does not offer call queues (no /callq_queues)."
                : `Queue membership could not be read: ${apiErrorText(error)}`,
            });
          }
        });
      },

      async setMembership(queueId, userId, member) {
        const key = `${queueId}:${userId}`;
        if (get().membership.pending.includes(key)) return false;
        // The box shows the choice at once; a refusal puts it back.
        const place = (isMember: boolean) =>
          set((s) => {
            const others = (s.membership.members[queueId] ?? []).filter((id) => id !== userId);
            return { membership: { ...s.membership, members: { ...s.membership.members, [queueId]: isMember ? [...others, userId] : others } } };
          });
        const settle = (changes: Partial<MembershipState>) =>
          set((s) => ({ membership: { ...s.membership, ...changes, pending: s.membership.pending.filter((p) => p !== key) } }));
        return (
          (await withConnection(async (connection) => {
            patchMembership({ pending: [...get().membership.pending, key], error: null });
            place(member);
            try {
              await api.changeMembership(connection, queueId, member ? "add" : "remove", [userId]);
              settle({});
              return true;
            } catch (error) {
              place(!member);
              settle({ error: `Membership was not changed: ${apiErrorText(error)}` });
              return false;
            }
          })) ?? false
        );
      },
    };
  };
}
