// The caller history (local addition, server/api/caller-history.ts) as the call card shows it:
// who the number is, its last calls with agents, disposition and note, recordings, and the CRM link.
import { ApiClient, isRecord, type ApiClientOptions } from "./client.js";
import { gregorianToMs } from "./gregorian.js";
import { numberOf, record, text } from "./platform.js";

export interface PastCall {
  interactionId: string;
  /** Epoch ms the call began. */
  at: number;
  durationS: number;
  direction: "inbound" | "outbound";
  agents: string[];
  dispositionCode: string;
  dispositionLabel: string;
  note: string;
  recordingIds: string[];
}

export interface CallerHistory {
  number: string;
  /** The contact's or user's name; "" when the number is nobody known. */
  name: string;
  calls: PastCall[];
  /** The CRM search for this number; "" when the queue and account have none. */
  crmLink: string;
}

export interface CallerHistoryApi {
  history(number: string, queueId?: string): Promise<CallerHistory>;
}

export interface CallerHistoryApiOptions extends ApiClientOptions {
  accountId: string;
}

/** Calls a call card lists. */
const CALLS_SHOWN = 5;

function pastCallOf(row: Record<string, unknown>): PastCall {
  const disposition = isRecord(row["disposition"]) ? row["disposition"] : {};
  const agents = Array.isArray(row["agents"]) ? row["agents"].filter(isRecord).map((a) => text(a, "name")) : [];
  const recordings = Array.isArray(row["recording_ids"]) ? row["recording_ids"].filter((r): r is string => typeof r === "string") : [];
  return {
    interactionId: text(row, "interaction_id"),
    at: gregorianToMs(numberOf(row["timestamp"])),
    durationS: numberOf(row["duration_seconds"]),
    direction: row["direction"] === "outbound" ? "outbound" : "inbound",
    agents,
    dispositionCode: text(disposition, "code"),
    dispositionLabel: text(disposition, "label") || text(disposition, "code"),
    note: text(disposition, "note"),
    recordingIds: recordings,
  };
}

export function createCallerHistoryApi(options: CallerHistoryApiOptions): CallerHistoryApi {
  const client = new ApiClient(options);
  const account = `/v2/accounts/${encodeURIComponent(options.accountId)}`;
  return {
    async history(number, queueId) {
      const query = new URLSearchParams({ page_size: String(CALLS_SHOWN) });
      if (queueId !== undefined) query.set("queue_id", queueId);
      const answer = await client.request<unknown>("GET", `${account}/caller_history/${encodeURIComponent(number)}?${query.toString()}`);
      const data = record(answer.data, "caller history");
      return {
        number: text(data, "number"),
        name: text(data, "name"),
        calls: Array.isArray(data["calls"]) ? data["calls"].filter(isRecord).map(pastCallOf) : [],
        crmLink: text(data, "crm_link"),
      };
    },
  };
}
