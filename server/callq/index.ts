// The call-queue engine's public face: the engine and the boundary types calls/ implements.
export {
  CallqEngine,
  CallqError,
  RECIPIENT_STATES_COLLECTION,
  type CallqEngineOptions,
  type CallqErrorCode,
  type MonitorMode,
  type QueueStatus,
  type RecipientStatus,
  type SessionRow,
} from "./engine.js";
export { type CallerId, type OfferOutcome, type OfferRequest, type QueuedCall, type Scheduler, type SessionEnd } from "./ports.js";
export { QUEUE_ALIASES, QUEUE_BOUNDS, QUEUE_DEFAULTS, queueConfigOf, withoutAliases, type QueueConfig } from "./queue-config.js";
export { ROUTERS, type RouterName } from "./queue-router.js";
export { RECIPIENT_ACTIONS, type AvailabilityState, type RecipientAction } from "./recipient-state.js";
