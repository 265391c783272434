// Training mode (issue 18): scenario documents, the seeded callers they describe, and headless runs
// of them on the real queue engine. The layer sits between api/ and sim/.
export { Prng } from "./prng.js";
export { draw, meanOf } from "./distributions.js";
export { plannedCallers, poissonArrivals, ratePieces, ScenarioTooBigError, STREAMS, type PlannedCaller } from "./generator.js";
export { runHeadless, summarise, type CallerRecord, type HeadlessRun, type RunSummary } from "./headless.js";
export * from "./scenario.js";
