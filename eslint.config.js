// Lint: no `any`, no non-null assertions, the process boundaries and the server's layers of architecture.md:
// the renderer imports neither Node built-ins nor electron; the server never imports electron, and
// each server layer imports only the layers below it.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import { builtinModules } from "node:module";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const RENDERER_PATHS = [
  { name: "electron", message: "the renderer is sandboxed; use window.desktop." },
  ...nodeBuiltins.map((name) => ({ name, message: "the renderer runs without Node." })),
];
/** The console's parts that build on renderer/api/ and renderer/phone/. */
const RENDERER_UPPER = ["state", "views", "components", "wallboard"];
const SERVER_NO_ELECTRON = { name: "electron", message: "server/ runs without Electron (serve mode)." };
/** The server's layers, highest first: each may import only those after it. */
const SERVER_LAYERS = ["api", "training", "sim", "texting", "events", "callq-host", "callq", "calls", "sip", "media", "auth", "http", "store"];
/**
 * Layers that stand alone: they import no other layer, only their own files and the shared leaves
 * at server/'s root. The queue engine decides; callq-host/ and calls/ act (docs/architecture.md).
 */
const SERVER_PURE = ["callq"];

export default tseslint.config(
  { ignores: ["out/**", "dist/**", "node_modules/**", "test-results/**", ".tmp/**"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-non-null-assertion": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["scripts/**/*.mjs", "*.js"],
    languageOptions: { globals: globals.node },
  },
  {
    files: ["server/**/*.ts", "test/**/*.ts", "bench/**/*.ts", "main/**/*.ts", "*.config.ts"],
    languageOptions: { globals: globals.node },
  },
  {
    files: ["server/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: [SERVER_NO_ELECTRON] }],
    },
  },
  // The server's layers (docs/architecture.md): a layer imports only the layers after it in
  // SERVER_LAYERS (and the shared leaves at server/'s root); server/index.ts composes them all.
  ...SERVER_LAYERS.map((layer, i) => ({
    files: [`server/${layer}/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [SERVER_NO_ELECTRON],
          patterns: [
            ...SERVER_LAYERS.slice(0, i).map((above) => ({
              group: [`**/${above}/*`, `**/${above}/**`],
              message: `server/${layer}/ sits below server/${above}/ (docs/architecture.md): it may not import it.`,
            })),
            ...(SERVER_PURE.includes(layer) ? SERVER_LAYERS.slice(i + 1) : []).map((below) => ({
              group: [`**/${below}/*`, `**/${below}/**`],
              message: `server/${layer}/ stands alone (docs/architecture.md): it reaches server/${below}/ only through its ports, which the layers above implement.`,
            })),
          ],
        },
      ],
    },
  })),
  // One clock (issue 16): the server reads the time, waits and draws randomness only through the
  // injected Clock and RandomSource (server/clock.ts), so tests and the training mode can run its
  // time. The clocks themselves and the media frame clock (audio keeps real time) are exempt.
  // setImmediate stays allowed: it yields a turn, it does not wait for a time.
  {
    files: ["server/**/*.ts"],
    ignores: ["server/clock.ts", "server/clock-*.ts", "server/media/frame-clock.ts"],
    rules: {
      "no-restricted-globals": [
        "error",
        ...["setTimeout", "setInterval", "clearTimeout", "clearInterval"].map((name) => ({
          name,
          message: "wait on the injected clock (Clock.after / Clock.every, server/clock.ts).",
        })),
      ],
      "no-restricted-properties": [
        "error",
        { object: "Date", property: "now", message: "read the time from the injected clock (Clock.now)." },
        { object: "performance", property: "now", message: "read the injected clock, or `monotonic` (server/clock.ts) for a guard against a peer." },
        { object: "Math", property: "random", message: "draw from the injected RandomSource (server/clock.ts)." },
        { object: "crypto", property: "randomUUID", message: "draw from the injected RandomSource (randomUuid in server/clock.ts)." },
        { object: "crypto", property: "getRandomValues", message: "draw from the injected RandomSource (server/clock.ts)." },
      ],
      "no-restricted-syntax": [
        "error",
        { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: "read the time from the injected clock: new Date(clock.now())." },
        {
          selector: "ImportDeclaration[source.value=/^(node:)?crypto$/] > ImportSpecifier[imported.name=/^(randomBytes|randomUUID|randomInt|randomFill|randomFillSync|getRandomValues)$/]",
          message: "draw from the injected RandomSource (server/clock.ts).",
        },
        {
          selector: "ImportDeclaration[source.value=/^(node:)?timers(\\/promises)?$/]",
          message: "wait on the injected clock (Clock.after / Clock.every, server/clock.ts).",
        },
      ],
    },
  },
  {
    files: ["renderer/**/*.ts", "renderer/**/*.tsx"],
    languageOptions: { globals: globals.browser },
    rules: {
      "no-restricted-imports": ["error", { paths: RENDERER_PATHS }],
    },
  },
  // The API's contract (contract/): shapes the server writes and the console reads, so both import
  // it; it imports neither of them, nor Node or electron, and stays types the two sides share.
  {
    files: ["contract/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: RENDERER_PATHS,
          patterns: [
            { group: ["**/server/**", "**/renderer/**"], message: "contract/ sits below the server and the console: both import it, it imports neither." },
          ],
        },
      ],
    },
  },
  // The console's lower layers: api/ (the server's APIs) and phone/ (the softphone) serve the
  // store and the views, so they import neither (the store's slices are built on them).
  {
    files: ["renderer/api/**/*.ts", "renderer/phone/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: RENDERER_PATHS,
          patterns: RENDERER_UPPER.map((upper) => ({
            group: [`../${upper}`, `../${upper}/**`, `**/renderer/${upper}/**`],
            message: `renderer/api/ and renderer/phone/ sit below renderer/${upper}/: they may not import it.`,
          })),
        },
      ],
    },
  },
);
