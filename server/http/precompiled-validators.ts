// The validators the build compiles ahead of time (ajv standalone code) for the schemas of the first
// requests after a start (server/api/precompiled-schemas.ts: the sign-ins, a simulated call), each
// found by its schema's JSON text (server/http/validation.ts, validator()). Compiling a schema with
// ajv at its first use ran ajv's code generator cold inside the first sign-in, that request's
// largest cost (issue 17, "Start").
//
// As source this module holds none: the tests and tsx runs compile every schema at its first use.
// The build (electron.vite.config.ts, precompiledValidators) replaces this module's text in the
// server's bundle with the generated code (server/http/precompile.ts), which exports the same
// name, and writes that code beside the bundle as out/main/precompiled-validators.js, which
// test/unit/start-precompiled-validators.test.ts holds against the schemas of the source.
import type { Validator } from "./validation.js";

export const PRECOMPILED_VALIDATORS: ReadonlyMap<string, Validator> = new Map();
