// Scheduled callbacks (local addition, server/api/callq-callbacks.ts): the agent's own (a
// supervisor's also their queues' members'), scheduled from a caller's history and reminded at
// their time by a callq.callback.<id> event.
import { ApiClient, isRecord, type ApiClientOptions } from "./client.js";
import { gregorianToMs, toGregorianSeconds } from "./gregorian.js";
import { numberOf, text } from "./platform.js";

export interface ScheduledCallback {
  id: string;
  number: string;
  /** Epoch ms. */
  remindAt: number;
  note: string;
  userId: string;
  state: "scheduled" | "reminded";
}

export interface CallbacksApi {
  list(): Promise<ScheduledCallback[]>;
  schedule(input: { number: string; remindAt: number; note: string }): Promise<ScheduledCallback>;
  cancel(id: string): Promise<void>;
}

export interface CallbacksApiOptions extends ApiClientOptions {
  accountId: string;
}

/** A callback as the API or its reminder event says it. */
export function scheduledCallbackOf(data: Record<string, unknown>): ScheduledCallback {
  return {
    id: text(data, "id") || text(data, "callback_id"),
    number: text(data, "number"),
    remindAt: gregorianToMs(numberOf(data["remind_at"])),
    note: text(data, "note"),
    userId: text(data, "user_id"),
    state: data["state"] === "reminded" ? "reminded" : "scheduled",
  };
}

export function createCallbacksApi(options: CallbacksApiOptions): CallbacksApi {
  const client = new ApiClient(options);
  const path = `/v2/accounts/${encodeURIComponent(options.accountId)}/callq_callbacks`;
  return {
    async list() {
      const answer = await client.request<unknown>("GET", `${path}?paginate=false`);
      return Array.isArray(answer.data) ? answer.data.filter(isRecord).map(scheduledCallbackOf) : [];
    },
    async schedule({ number, remindAt, note }) {
      const answer = await client.request<unknown>("PUT", path, { body: { number, remind_at: toGregorianSeconds(remindAt), ...(note === "" ? {} : { note }) } });
      return scheduledCallbackOf(isRecord(answer.data) ? answer.data : {});
    },
    async cancel(id) {
      await client.request<unknown>("DELETE", `${path}/${encodeURIComponent(id)}`);
    },
  };
}
