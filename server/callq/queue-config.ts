// A queue's settings as the engine uses them: the stored callq_queues document read with the
// spec's defaults and bounds, and the hosted product's old field names accepted.
import { alertConfigOf, type AlertConfig } from "./alerts.js";
import { ROUTERS, type RouterName } from "./queue-router.js";

export interface QueueConfig {
  id: string;
  name: string;
  router: RouterName;
  /** Seconds a caller may wait. */
  timeoutS: number;
  ringTimeoutS: number;
  wrapupS: number;
  tickMs: number;
  holdTreatment: string | undefined;
  forceAwayOnReject: boolean;
  /** Consecutive missed offers after which the recipient is set Away; 0: never. */
  maxMissedOffers: number;
  timeoutIfSizeExceeds: number;
  timeoutImmediatelyIfEmpty: boolean;
  timeoutRedirect: string | undefined;
  /** Recipient (user) ids in the order offers go round. */
  members: string[];
  /** Service level (local addition): seconds within which an answer counts as in time. */
  serviceLevelS: number;
  /** Service level (local addition): the percent of callers to answer in time. */
  serviceLevelTarget: number;
  // Dispositions and wrap-up (local additions, issue 19).
  /** The codes a recipient may give a call of this queue, in the order the console lists them. */
  dispositions: DispositionCode[];
  /** Whether a call of this queue needs a disposition before its recipient is Ready again. */
  dispositionRequired: boolean;
  wrapupPolicy: WrapupPolicy;
  /** Alerts (local addition, issue 20): none of a kind whose limit is absent. */
  alerts: AlertConfig;
  /** Callbacks (local addition, issue 19): absent unless the queue enables them. */
  callback: CallbackConfig | undefined;
}

// ---- callbacks (local addition, issue 19) -------------------------------------------------

export interface CallbackConfig {
  /** The DTMF digit a waiting caller presses to be called back. */
  digit: string;
  /** Dialling attempts before the callback is given up. */
  maxAttempts: number;
  /** Seconds between a failed attempt and the next offer of the callback. */
  retryDelayS: number;
}

export const CALLBACK_DEFAULTS = { digit: "1", max_attempts: 3, retry_delay_s: 60 } as const;
export const CALLBACK_BOUNDS = { max_attempts: { min: 1, max: 10 }, retry_delay_s: { min: 0, max: 86_400 } } as const;
export const CALLBACK_DIGIT_PATTERN = "^[0-9*#]$";

function callbackConfigOf(value: unknown): CallbackConfig | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const given = value as Record<string, unknown>;
  if (given.enabled !== true) return undefined;
  const digit = typeof given.digit === "string" && new RegExp(CALLBACK_DIGIT_PATTERN).test(given.digit) ? given.digit : CALLBACK_DEFAULTS.digit;
  const attempts = Math.floor(num(given.max_attempts, CALLBACK_DEFAULTS.max_attempts, CALLBACK_BOUNDS.max_attempts.min));
  return {
    digit,
    maxAttempts: Math.min(attempts, CALLBACK_BOUNDS.max_attempts.max),
    retryDelayS: Math.min(num(given.retry_delay_s, CALLBACK_DEFAULTS.retry_delay_s, CALLBACK_BOUNDS.retry_delay_s.min), CALLBACK_BOUNDS.retry_delay_s.max),
  };
}

// ---- dispositions and wrap-up (local additions, issue 19) ---------------------------------

export interface DispositionCode {
  code: string;
  label: string;
}

/**
 * What follows a queue call, after Genesys's four: `optional` no wrap-up (Ready at once);
 * `required` a wrap-up the recipient ends themself, however long; `timeboxed` the queue's
 * agent_wrapup_time, left early at will (the hosted service's behaviour, the default);
 * `timeboxed_no_exit` the same time, which may not be cut short.
 */
export const WRAPUP_POLICIES = ["optional", "required", "timeboxed", "timeboxed_no_exit"] as const;
export type WrapupPolicy = (typeof WRAPUP_POLICIES)[number];

export const DISPOSITION_DEFAULTS = { disposition_required: false, wrapup_policy: "timeboxed" } as const;

/** A code is what scripts and reports match on: lower case, digits, `_` and `-`. */
export const DISPOSITION_CODE_PATTERN = "^[a-z0-9][a-z0-9_-]{0,63}$";

function dispositionsOf(value: unknown): DispositionCode[] {
  if (!Array.isArray(value)) return [];
  const codes: DispositionCode[] = [];
  const seen = new Set<string>();
  for (const item of value) {
    if (typeof item !== "object" || item === null) continue;
    const { code, label } = item as Record<string, unknown>;
    if (typeof code !== "string" || code === "" || seen.has(code)) continue;
    seen.add(code);
    codes.push({ code, label: typeof label === "string" && label !== "" ? label : code });
  }
  return codes;
}

function dispositionConfigOf(data: Record<string, unknown>): Pick<QueueConfig, "dispositions" | "dispositionRequired" | "wrapupPolicy"> {
  const dispositions = dispositionsOf(data.dispositions);
  return {
    dispositions,
    // Required with no code to give would hold every recipient back for good.
    dispositionRequired: data.disposition_required === true && dispositions.length > 0,
    wrapupPolicy: WRAPUP_POLICIES.find((p) => p === data.wrapup_policy) ?? DISPOSITION_DEFAULTS.wrapup_policy,
  };
}

/** The service level a queue without one of its own aims at: 80% answered within 20 s. */
export const SERVICE_LEVEL_DEFAULTS = { answered_within_s: 20, target_percent: 80 } as const;
export const SERVICE_LEVEL_BOUNDS = { answered_within_s: { min: 1, max: 3600 }, target_percent: { min: 1, max: 100 } } as const;

export const QUEUE_DEFAULTS = {
  queue_type: "queue_basic",
  queue_router: "route_round_robin",
  timeout: 3600,
  ring_timeout: 20,
  agent_wrapup_time: 0,
  tick_time: 1000,
  force_away_on_reject: false,
  max_missed_offers: 3,
  timeout_if_size_exceeds: 0,
  timeout_immediately_if_empty: false,
} as const;

export const QUEUE_BOUNDS = { timeout: 10, ring_timeout: 1, agent_wrapup_time: 0, tick_time: 250 } as const;

/** Old names of the hosted product, accepted on input: alias -> field. */
export const QUEUE_ALIASES: Readonly<Record<string, string>> = {
  queue_name: "name",
  agent_connect_timeout: "ring_timeout",
  queue_timeout: "timeout",
};

/** Input with the old names moved to the new ones (a new name given too wins). */
export function withoutAliases(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...data };
  for (const [alias, field] of Object.entries(QUEUE_ALIASES)) {
    if (alias in out) {
      if (out[field] === undefined) out[field] = out[alias];
      delete out[alias];
    }
  }
  return out;
}

function num(value: unknown, fallback: number, min: number): number {
  return typeof value === "number" && Number.isFinite(value) && value >= min ? value : fallback;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Reads a stored queue defensively: the API validated it, but a data file can be hand-edited. */
export function queueConfigOf(id: string, stored: Record<string, unknown>): QueueConfig {
  const data = withoutAliases(stored);
  const router = ROUTERS.find((r) => r === data.queue_router) ?? QUEUE_DEFAULTS.queue_router;
  const members = typeof data.members === "object" && data.members !== null && !Array.isArray(data.members) ? Object.keys(data.members) : [];
  return {
    id,
    name: text(data.name) ?? id,
    router,
    timeoutS: num(data.timeout, QUEUE_DEFAULTS.timeout, QUEUE_BOUNDS.timeout),
    ringTimeoutS: num(data.ring_timeout, QUEUE_DEFAULTS.ring_timeout, QUEUE_BOUNDS.ring_timeout),
    wrapupS: num(data.agent_wrapup_time, QUEUE_DEFAULTS.agent_wrapup_time, QUEUE_BOUNDS.agent_wrapup_time),
    tickMs: num(data.tick_time, QUEUE_DEFAULTS.tick_time, QUEUE_BOUNDS.tick_time),
    holdTreatment: text(data.hold_treatment),
    forceAwayOnReject: data.force_away_on_reject === true,
    maxMissedOffers: Math.floor(num(data.max_missed_offers, QUEUE_DEFAULTS.max_missed_offers, 0)),
    timeoutIfSizeExceeds: num(data.timeout_if_size_exceeds, 0, 0),
    timeoutImmediatelyIfEmpty: data.timeout_immediately_if_empty === true,
    timeoutRedirect: text(data.timeout_redirect),
    members,
    ...serviceLevelOf(data.service_level),
    ...dispositionConfigOf(data),
    alerts: alertConfigOf(data.alerts),
    callback: callbackConfigOf(data.callback),
  };
}

function serviceLevelOf(value: unknown): Pick<QueueConfig, "serviceLevelS" | "serviceLevelTarget"> {
  const given = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const within = num(given.answered_within_s, SERVICE_LEVEL_DEFAULTS.answered_within_s, SERVICE_LEVEL_BOUNDS.answered_within_s.min);
  const target = num(given.target_percent, SERVICE_LEVEL_DEFAULTS.target_percent, SERVICE_LEVEL_BOUNDS.target_percent.min);
  return { serviceLevelS: within, serviceLevelTarget: Math.min(target, SERVICE_LEVEL_BOUNDS.target_percent.max) };
}
