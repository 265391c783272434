// The floor's figures for supervisors (local additions): the whole account's live figures, a
// queue's history per 15-minute interval by day (JSON or CSV) and its staffing estimate. Admins
// and supervisors (call_monitor: they watch every queue of the account) read them; agents get 403.
import type { FastifyInstance } from "fastify";
import {
  dayBounds,
  dayIntervals,
  dayOf,
  emptyFigures,
  FIGURE_NAMES,
  SERVICE_LEVEL_BOUNDS,
  timeOf,
  type IntervalFigures,
  type WhatIf,
} from "../callq/index.js";
import { abandonmentRate, averageHandleTime, averageSpeedOfAnswer, serviceLevel } from "../callq/intervals.js";
import { IntervalDays } from "../callq-host/index.js";
import { toGregorianSeconds } from "../clock.js";
import { registerEndpoint, type Ctx } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { notFound, type Data } from "../http/resource.js";
import { askEngine, callqEngine, hasCallMonitor } from "./callq-queues.js";
import type { ApiDeps } from "./deps.js";

/** The staffing window's default and bounds, minutes. */
export const STAFFING_MINUTES = { default: 60, min: 15, max: 24 * 60 } as const;

/** What-if inputs of the staffing estimate: query parameter -> its bounds. */
const WHAT_IF: Record<keyof WhatIf, { min: number; max: number }> = {
  calls_per_hour: { min: 0, max: 100_000 },
  handle_time: { min: 1, max: 86_400 },
  target_percent: SERVICE_LEVEL_BOUNDS.target_percent,
  answered_within_s: SERVICE_LEVEL_BOUNDS.answered_within_s,
  patience: { min: 0, max: 86_400 },
};

export function registerCallqStats(app: FastifyInstance, deps: ApiDeps): void {
  const base = "/v2/accounts/:account_id/callq_queues";
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";
  const days = new IntervalDays(deps.store);

  /** Admins, API keys and supervisors (call_monitor) read the floor's figures; nobody else. */
  const mustSupervise = async (ctx: Ctx): Promise<void> => {
    const auth = ctx.auth;
    if (auth?.isAdmin === true) return;
    const user = auth?.ownerId ? (await deps.collection(accountOf(ctx), "users")).get(auth.ownerId) : undefined;
    if (hasCallMonitor(user)) return;
    throw new ApiError("forbidden", { user: { supervisor_or_admin: { message: "queue figures are for account admins and supervisors (call_monitor)" } } });
  };
  const queueIdOf = async (ctx: Ctx): Promise<string> => {
    const id = ctx.params.id ?? "";
    if (!(await deps.collection(accountOf(ctx), "callq_queues")).has(id)) throw notFound(id);
    return id;
  };

  registerEndpoint(app, deps, {
    path: `${base}/stats`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: {
        summary:
          "Local addition: the account's floor today, every queue together: service level (answered within each queue's threshold over the callers who stopped waiting), average speed of answer, abandonment rate, longest wait, callers waiting, recipients by state",
        handler: async (ctx) => {
          await mustSupervise(ctx);
          return { data: await askEngine({}, () => callqEngine(deps).accountFloor(accountOf(ctx))) };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/intervals`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: {
        summary:
          "Local addition: a queue's figures per 15-minute interval of one local day (day=YYYY-MM-DD, default today), every interval listed, oldest first; accept=csv for CSV. Each caller counts in the interval they entered the queue in.",
        handler: async (ctx) => {
          await mustSupervise(ctx);
          const queueId = await queueIdOf(ctx);
          const day = ctx.req.query.day ?? dayOf(ctx.now.getTime());
          const bounds = dayBounds(day);
          if (!bounds) throw new ApiError("validation_error", { day: { format: { message: "day must be a date, YYYY-MM-DD", value: day } } });
          // Today's latest counts are on their way to the store: read them once they are there.
          await deps.callq?.intervalsWritten();
          const stored = new Map<number, IntervalFigures>((await days.day(accountOf(ctx), queueId, day)).map((i) => [i.start, i]));
          return { data: dayIntervals(day).map((start) => intervalRow(queueId, start, stored.get(start) ?? emptyFigures())) };
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: `${base}/:id/staffing`,
    access: "account",
    tag: "callq_queues",
    verbs: {
      GET: {
        summary:
          "Local addition: an estimate (Erlang C; Erlang A where callers abandoned, giving their patience) of the agents the queue needs for its service level, from the arrivals and handle times of the last `minutes` (default 60, from that interval's start), beside the agents logged in and Ready; calls_per_hour, handle_time, target_percent, answered_within_s and patience replace the measured inputs (what-if)",
        handler: async (ctx) => {
          await mustSupervise(ctx);
          const queueId = await queueIdOf(ctx);
          const minutes = numberParam(ctx, "minutes", { min: STAFFING_MINUTES.min, max: STAFFING_MINUTES.max }) ?? STAFFING_MINUTES.default;
          const whatIf: WhatIf = {};
          for (const [name, bounds] of Object.entries(WHAT_IF) as [keyof WhatIf, { min: number; max: number }][]) {
            const value = numberParam(ctx, name, bounds);
            if (value !== undefined) whatIf[name] = value;
          }
          return { data: await askEngine({ queue: queueId }, () => callqEngine(deps).staffing(accountOf(ctx), queueId, minutes, whatIf)) };
        },
      },
    },
  });
}

/** A query parameter that must be a number within `bounds` when given. */
function numberParam(ctx: Ctx, name: string, bounds: { min: number; max: number }): number | undefined {
  const raw = ctx.req.query[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < bounds.min || value > bounds.max) {
    throw new ApiError("validation_error", { [name]: { range: { message: `${name} must be a number from ${bounds.min} to ${bounds.max}`, value: raw } } });
  }
  return value;
}

/** One interval as the history shows it: its counts and the ratios drawn from them. */
function intervalRow(queueId: string, start: number, figures: IntervalFigures): Data {
  const counts: Data = {};
  for (const name of FIGURE_NAMES) counts[name] = figures[name];
  return {
    queue_id: queueId,
    day: dayOf(start),
    time: timeOf(start),
    interval_start: toGregorianSeconds(start),
    ...counts,
    service_level: serviceLevel(figures),
    abandonment_rate: abandonmentRate(figures),
    average_speed_of_answer: averageSpeedOfAnswer(figures),
    average_handle_time: averageHandleTime(figures),
  };
}
