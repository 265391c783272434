// The schemas the build compiles ahead of time into the server's bundle (ajv standalone code,
// server/http/precompiled-validators.ts): those of the first requests after a start, the demo's
// sign-ins (a user's, an API key's) and a simulated caller (the bench's and the README's first
// call). Any other schema is compiled by ajv at its first use, as before. Read only by the build
// (electron.vite.config.ts) and its staleness test, never by the server.
import type { JsonSchema } from "../http/validation.js";
import { API_AUTH_SCHEMA, USER_AUTH_SCHEMA } from "./auth.js";
import { SIM_CALL_START_SCHEMA } from "./sim.js";

export const PRECOMPILED_SCHEMAS: readonly JsonSchema[] = [USER_AUTH_SCHEMA, API_AUTH_SCHEMA, SIM_CALL_START_SCHEMA];
