// Training mode (issue 18): scenario documents, the seeded callers they describe, and headless runs
// of them on the real queue engine. The layer sits between api/ and sim/.
export { Prng } from "./prng.js";
export { draw, meanOf } from "./distributions.js";
export { plannedCallers, poissonArrivals, ratePieces, ScenarioTooBigError, STREAMS, type PlannedCaller } from "./generator.js";
export { runHeadless, summarise, type CallerRecord, type HeadlessRun, type RunSummary } from "./headless.js";
export * from "./scenario.js";
export { DEFAULT_FAULT_S, FaultError, LiveRuns, MAX_LIVE_AGENTS, MAX_LIVE_CALLERS, RunConflictError, RunScenarioError, RunStateError, RUNS_COLLECTION, type FaultRequest, type LiveRun, type ObservedEvent, type RunEvent } from "./live.js";
export { scorecard, scorecardRows, SCORECARD_COLUMNS, type Scorecard } from "./scorecard.js";
