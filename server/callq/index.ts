// The call-queue engine's public face: the engine, its views and the ports callq-host/ implements.
export { CallqEngine, CallqError, DEFAULT_DEVICE_GRACE_MS, type CallqEngineOptions, type CallqErrorCode } from "./engine.js";
export {
  type CallerId,
  type CallqAccount,
  type CallqDirectory,
  type CallqLogger,
  type CallqUser,
  type IntervalLedger,
  type OfferOutcome,
  type OfferRequest,
  type QueuedCall,
  type RecipientDayLedger,
  type RecipientLedger,
  type Scheduler,
  type SessionEnd,
} from "./ports.js";
export { QUEUE_ALIASES, QUEUE_BOUNDS, QUEUE_DEFAULTS, queueConfigOf, withoutAliases, type QueueConfig } from "./queue-config.js";
export { ROUTERS, type RouterName } from "./queue-router.js";
export type { SavedRecipient } from "./recipient.js";
export { RECIPIENT_ACTIONS, type AvailabilityState, type RecipientAction } from "./recipient-state.js";
export type { QueueStatus, RecipientStatus, SessionRow, Wiretap, WiretapListener } from "./views.js";
export { FIGURE_NAMES, INTERVAL_MS, dayBounds, dayIntervals, dayOf, emptyFigures, intervalStart, timeOf, type IntervalFigures, type QueueInterval } from "./intervals.js";
export type { StaffingEstimate, WhatIf } from "./staffing.js";
export type { AccountFloor, FloorFigures } from "./views.js";
export { SERVICE_LEVEL_BOUNDS, SERVICE_LEVEL_DEFAULTS } from "./queue-config.js";
export { COUNTED_STATES, dayView, emptyDay, isCountedState, type CountedState, type RecipientDay, type RecipientDayView } from "./recipient-day.js";
