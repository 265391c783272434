// The first requests' validators are compiled by the build (ajv standalone code, issue 17 "Start"):
// server/api/precompiled-schemas.ts lists the schemas, server/http/precompile.ts makes the module,
// the build writes it beside the bundle (out/main/precompiled-validators.js) and puts it in the
// bundle in place of server/http/precompiled-validators.ts. Here: the built file is the one the
// schemas of this source make (a schema changed without a build fails), and each precompiled
// validator answers as the validator ajv compiles at a first use does: the same verdict and the
// same errors, field by field, for good and bad bodies.
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRECOMPILED_VALIDATORS_FILE } from "../../electron.vite.config.js";
import { API_AUTH_SCHEMA, USER_AUTH_SCHEMA } from "../../server/api/auth.js";
import { PRECOMPILED_SCHEMAS } from "../../server/api/precompiled-schemas.js";
import { SIM_CALL_START_SCHEMA } from "../../server/api/sim.js";
import { precompiledValidatorsModule } from "../../server/http/precompile.js";
import { PRECOMPILED_VALIDATORS as SOURCE_TABLE } from "../../server/http/precompiled-validators.js";
import { toFieldErrors, validator, type JsonSchema, type Validator } from "../../server/http/validation.js";
import { SERVER_ENTRY } from "../helpers/serve.js";

const MD5 = "0123456789abcdef0123456789abcdef";

/** Bodies each schema is tried with: good ones and every kind of bad one its keywords can refuse. */
const CASES: readonly [string, JsonSchema, unknown[]][] = [
  [
    "user_auth",
    USER_AUTH_SCHEMA,
    [
      { credentials: MD5, account_name: "demo" },
      { credentials: `${MD5}01234567`, method: "sha", phone_number: "+14155550101" },
      { credentials: MD5, account_realm: "demo.switchboard.local", extra: true },
      {},
      { credentials: 5, account_name: "demo" },
      { credentials: "zz", account_name: "" },
      { credentials: MD5 },
      { credentials: MD5, method: "sha256", account_name: "x".repeat(129) },
      { account_realm: "", phone_number: "1".repeat(33) },
      [],
      "credentials",
      null,
      7,
    ],
  ],
  ["api_auth", API_AUTH_SCHEMA, [{ api_key: "k" }, {}, { api_key: "" }, { api_key: 5 }, { api_key: "k".repeat(257) }, null, []]],
  [
    "sim call",
    SIM_CALL_START_SCHEMA,
    [
      { to: "5001", caller_id_number: "+14155550100", audio: "tone_stream://440" },
      { to: "5001", caller_id_name: "Casey", caller_id_number: "+14155550100", phone: { answer: "busy" } },
      { to: "5001", caller_id_number: "1", script: { steps: [{ say: "hello", language: "en-US" }, { wait_s: 2 }, { digits: "12#" }, { hangup: true }], patience_s: 30 } },
      {},
      { to: "50 01", phone: { answer: "maybe" } },
      { to: "", caller_id_number: 5, caller_id_name: "", audio: "" },
      { to: "x".repeat(65), caller_id_number: "1", phone: { audio: "a", extra: 1 } },
      { to: "1", caller_id_number: "1", script: { steps: [{ say: "" }, { wait_s: -1 }, { digits: "x" }, { hangup: false }, { other: 1 }], voice: "a b" } },
      { to: "1", caller_id_number: "1", script: { steps: "none", talk_s: 86_401 } },
      { to: "1", caller_id_number: "1", script: {} },
      [],
      null,
    ],
  ],
];

let work: string;
let generated: ReadonlyMap<string, Validator>;

beforeAll(async () => {
  // The module as the build makes it, loaded here as the bundle would run it: its `require`s are
  // ajv's runtime helpers, which an ES module file gets from createRequire.
  work = await mkdtemp(join(tmpdir(), "sb-precompiled-"));
  const file = join(work, "validators.mjs");
  const shim = `import { createRequire } from "node:module"; const require = createRequire(${JSON.stringify(pathToFileURL(join(import.meta.dirname, "../../package.json")).href)});\n`;
  await writeFile(file, shim + precompiledValidatorsModule(PRECOMPILED_SCHEMAS));
  generated = ((await import(pathToFileURL(file).href)) as { PRECOMPILED_VALIDATORS: ReadonlyMap<string, Validator> }).PRECOMPILED_VALIDATORS;
});

afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

describe("the first requests' precompiled validators", () => {
  it("are built from the schemas of this source (a schema changed without a build fails here)", async () => {
    const built = await readFile(join(dirname(SERVER_ENTRY), PRECOMPILED_VALIDATORS_FILE), "utf8").catch(() => "");
    expect(built, "out/main/precompiled-validators.js is missing: run npx electron-vite build").not.toBe("");
    expect(built === precompiledValidatorsModule(PRECOMPILED_SCHEMAS), "out/main/precompiled-validators.js is stale: run npx electron-vite build").toBe(true);
  });

  it("has one validator per listed schema, found by the schema's JSON text; the source's table is empty", () => {
    expect([...generated.keys()].sort()).toEqual(PRECOMPILED_SCHEMAS.map((s) => JSON.stringify(s)).sort());
    for (const [, schema] of CASES) expect(generated.has(JSON.stringify(schema))).toBe(true);
    // Outside the build (tests, tsx) every schema is compiled at its first use.
    expect(SOURCE_TABLE.size).toBe(0);
  });

  for (const [name, schema, bodies] of CASES) {
    it(`answers ${name} bodies as ajv's compile at first use does: verdict, errors and the envelope's field errors`, () => {
      const pre = generated.get(JSON.stringify(schema));
      const compiled = validator(schema);
      expect(pre).toBeDefined();
      if (!pre) return;
      let refused = 0;
      for (const body of bodies) {
        const verdict = pre(body);
        expect(verdict, JSON.stringify(body)).toBe(compiled(body));
        if (verdict) continue;
        refused++;
        const strip = (errors: Validator["errors"]) =>
          (errors ?? []).map(({ instancePath, schemaPath, keyword, params, message, data }) => ({ instancePath, schemaPath, keyword, params, message, data }));
        expect(strip(pre.errors), JSON.stringify(body)).toEqual(strip(compiled.errors));
        expect(toFieldErrors(pre.errors ?? [])).toEqual(toFieldErrors(compiled.errors ?? []));
      }
      expect(refused).toBeGreaterThan(2);
    });
  }
});
