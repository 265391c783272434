// `npm run bench [name...]`: builds, then runs each benchmark in bench/ (TypeScript through tsx)
// and prints its figures. With names, runs only those (e.g. `npm run bench -- store`).
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";

const wanted = process.argv.slice(2);
const all = readdirSync("bench").filter((f) => f.endsWith(".ts") && f !== "report.ts").map((f) => f.replace(/\.ts$/, ""));
const names = wanted.length ? all.filter((n) => wanted.includes(n)) : all;

if (spawnSync("npx", ["electron-vite", "build"], { stdio: ["ignore", "ignore", "inherit"] }).status !== 0) process.exit(1);
let failed = 0;
for (const name of names) {
  const r = spawnSync(process.execPath, ["--import", "tsx", `bench/${name}.ts`], { stdio: "inherit" });
  if (r.status !== 0) {
    failed++;
    console.error(`bench ${name} failed`);
  }
}
process.exit(failed ? 1 : 0);
