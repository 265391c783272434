// The local additions the directory view reads and writes: the account's users with their live
// presence, the quick connects admins chose, the user's own do not disturb and auto-answer, and
// their missed direct calls. Answers are reduced to the fields the console uses.
import { ApiClient, isRecord, type ApiClientOptions } from "./client.js";
import { gregorianToMs } from "./gregorian.js";
import { list, numberOf as numberIn, record, text } from "./platform.js";

/** The console's copy of the server's presence list (server/api/directory.ts PRESENCES). */
export const PRESENCES = ["on_call", "ringing", "offline", "do_not_disturb", "ready", "away", "wrapup", "available"] as const;
export type Presence = (typeof PRESENCES)[number];

export interface Colleague {
  id: string;
  name: string;
  username: string;
  extensions: string[];
  presence: Presence;
  awayReason: string;
}

export interface QuickConnect {
  id: string;
  name: string;
  type: "user" | "queue" | "external";
  targetId: string;
  /** What to dial: the number given, or the first number of the callflow that reaches the target; "" when none does. */
  number: string;
}

export interface Preferences {
  doNotDisturb: boolean;
  autoAnswer: { enabled: boolean; delayS: number };
}

export interface MissedCall {
  id: string;
  callerName: string;
  callerNumber: string;
  /** Epoch ms. */
  at: number;
  seen: boolean;
}

export interface DirectoryApi {
  colleagues(): Promise<Colleague[]>;
  quickConnects(): Promise<QuickConnect[]>;
  preferences(userId: string): Promise<Preferences>;
  setPreferences(userId: string, patch: Partial<Preferences>): Promise<Preferences>;
  missedCalls(userId: string): Promise<MissedCall[]>;
  markMissedSeen(userId: string): Promise<void>;
}

export interface DirectoryApiOptions extends ApiClientOptions {
  accountId: string;
}

function presenceOf(value: unknown): Presence {
  return PRESENCES.find((p) => p === value) ?? "offline";
}

/** One directory entry (an event's data or a row of the list). */
export function colleagueOf(row: Record<string, unknown>): Colleague {
  return {
    id: text(row, "id"),
    name: text(row, "name") || text(row, "username"),
    username: text(row, "username"),
    extensions: Array.isArray(row["extensions"]) ? row["extensions"].filter((e): e is string => typeof e === "string") : [],
    presence: presenceOf(row["presence"]),
    awayReason: text(row, "away_reason"),
  };
}

function preferencesOf(data: Record<string, unknown>): Preferences {
  const dnd = isRecord(data["do_not_disturb"]) ? data["do_not_disturb"] : {};
  const auto = isRecord(data["auto_answer"]) ? data["auto_answer"] : {};
  return { doNotDisturb: dnd["enabled"] === true, autoAnswer: { enabled: auto["enabled"] === true, delayS: numberIn(auto["delay_s"]) } };
}

export function createDirectoryApi(options: DirectoryApiOptions): DirectoryApi {
  const client = new ApiClient(options);
  const account = `/v2/accounts/${encodeURIComponent(options.accountId)}`;
  const get = async (path: string): Promise<unknown> => (await client.request<unknown>("GET", account + path)).data;
  const user = (id: string) => `/users/${encodeURIComponent(id)}`;
  /** The first number of a callflow whose first module names the user or queue. */
  const numberOf = async (targetId: string): Promise<string> => {
    const flows = list(await get(`/callflows?filter_flow.data.id=${encodeURIComponent(targetId)}&paginate=false`), "callflows");
    const numbers = flows.flatMap((f) => (Array.isArray(f["numbers"]) ? f["numbers"].filter((n): n is string => typeof n === "string") : []));
    return numbers[0] ?? "";
  };

  return {
    async colleagues() {
      return list(await get("/directory"), "directory").map(colleagueOf).filter((c) => c.id !== "");
    },

    async quickConnects() {
      const rows = list(await get("/quick_connects?paginate=false"), "quick connects");
      return Promise.all(
        rows.map(async (row): Promise<QuickConnect> => {
          const type = row["type"] === "user" || row["type"] === "queue" ? row["type"] : "external";
          const targetId = text(row, "target_id");
          const number = type === "external" ? text(row, "number") : await numberOf(targetId);
          return { id: text(row, "id"), name: text(row, "name"), type, targetId, number };
        }),
      );
    },

    async preferences(userId) {
      return preferencesOf(record(await get(`${user(userId)}/preferences`), "preferences"));
    },

    async setPreferences(userId, patch) {
      const body: Record<string, unknown> = {};
      if (patch.doNotDisturb !== undefined) body["do_not_disturb"] = { enabled: patch.doNotDisturb };
      if (patch.autoAnswer !== undefined) body["auto_answer"] = { enabled: patch.autoAnswer.enabled, delay_s: patch.autoAnswer.delayS };
      const answer = await client.request<unknown>("PATCH", `${account}${user(userId)}/preferences`, { body });
      return preferencesOf(record(answer.data, "preferences"));
    },

    async missedCalls(userId) {
      return list(await get(`${user(userId)}/missed_calls?page_size=50`), "missed calls").map((row) => ({
        id: text(row, "id"),
        callerName: text(row, "caller_id_name"),
        callerNumber: text(row, "caller_id_number"),
        at: gregorianToMs(numberIn(row["timestamp"])),
        seen: row["seen"] === true,
      }));
    },

    async markMissedSeen(userId) {
      await client.request<unknown>("POST", `${account}${user(userId)}/missed_calls/seen`, { body: {} });
    },
  };
}
