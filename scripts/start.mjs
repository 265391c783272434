// `npm start`: builds, then runs the desktop app; where no Electron binary exists (it cannot be
// downloaded on machines without open network access) it says so and runs serve mode instead.
import { spawn, spawnSync } from "node:child_process";
import { findElectronBinary } from "./electron-bin.mjs";

const build = spawnSync("npx", ["electron-vite", "build"], { stdio: ["ignore", "ignore", "inherit"] });
if (build.status !== 0) {
  console.error("switchboard: the build failed; see the errors above");
  process.exit(build.status ?? 1);
}

const args = process.argv.slice(2);
let electron = findElectronBinary().path;
if (!electron && !process.env.ELECTRON_SKIP_BINARY_DOWNLOAD) {
  // Install scripts are off (.npmrc), so the binary is fetched here, once, where the network allows.
  const install = spawnSync(process.execPath, ["node_modules/electron/install.js"], { stdio: "ignore", timeout: 120_000 });
  if (install.status === 0) electron = findElectronBinary().path;
}

// --no-memory-reducer: server/v8-flags.ts's SERVER_V8_FLAGS (V8 takes its flags at the start).
const child = electron
  ? spawn(electron, [".", ...args], { stdio: "inherit" })
  : (console.log("Electron binary not found and it cannot be downloaded here; running serve mode instead."),
    spawn(process.execPath, ["--no-memory-reducer", "out/main/server.js", ...args], { stdio: "inherit" }));

for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
