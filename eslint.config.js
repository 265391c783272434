// Lint: no `any`, no non-null assertions, and the process boundaries of architecture.md:
// the renderer imports neither Node built-ins nor electron; the server never imports electron.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import globals from "globals";
import { builtinModules } from "node:module";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

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
      "no-restricted-imports": ["error", { paths: [{ name: "electron", message: "server/ runs without Electron (serve mode)." }] }],
    },
  },
  {
    files: ["renderer/**/*.ts", "renderer/**/*.tsx"],
    languageOptions: { globals: globals.browser },
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "electron", message: "the renderer is sandboxed; use window.desktop." },
            ...nodeBuiltins.map((name) => ({ name, message: "the renderer runs without Node." })),
          ],
        },
      ],
    },
  },
);
