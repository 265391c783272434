// /v2/accounts/{account_id}/events: the account's event log after a sequence number, oldest first,
// in pages, so a client that was away (a websocket that dropped) can catch up on what it missed.
import type { FastifyInstance } from "fastify";
import { ApiError } from "../http/errors.js";
import { registerEndpoint } from "../http/endpoint.js";
import type { Paging } from "../http/envelope.js";
import { DEFAULT_PAGE_SIZE } from "../http/paging.js";
import { fieldError } from "../http/validation.js";
import type { ApiDeps } from "./deps.js";

export function registerEvents(app: FastifyInstance, deps: ApiDeps): void {
  const events = deps.events;
  if (!events) return;
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/events",
    access: "account",
    tag: "events",
    verbs: {
      GET: {
        summary: "List the account's events after `since` (a sequence number), oldest first",
        handler: async (ctx) => {
          const query = ctx.req.query;
          const since = afterOf(query);
          const size = pageSizeOf(query.page_size);
          // One more than the page tells whether there is a next page and where it starts.
          const { events: found, complete } = await events.log.since(ctx.params.account_id ?? "", since, size + 1);
          const rows = found.slice(0, size);
          const paging: Paging = { page_size: rows.length };
          const first = rows[0];
          const next = found[size];
          if (first) paging.start_key = String(first.seq);
          if (next) paging.next_start_key = String(next.seq);
          // The log keeps a bounded history: say so when it no longer reaches back to `since`.
          const headers: Record<string, string> = complete ? {} : { "X-Events-Complete": "false" };
          return { data: rows, paging, headers };
        },
      },
    },
  });
}

/**
 * The sequence the page starts after: `since` (exclusive, what a websocket client last saw) or
 * `start_key` (inclusive, a page's next_start_key); 0 for the oldest the log holds.
 */
function afterOf(query: Record<string, string>): number {
  if (query.start_key !== undefined) return wholeNumber("start_key", query.start_key) - 1;
  if (query.since !== undefined) return wholeNumber("since", query.since);
  return 0;
}

function wholeNumber(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw fieldError(name, "type", `${name} must be a whole number`, value);
  return n;
}

/** As every list's page_size (http/paging.ts). */
function pageSizeOf(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  const size = Number(value);
  if (!/^\d+$/.test(value) || size < 1) throw new ApiError("faulty_request", { page_size: value });
  return size;
}
