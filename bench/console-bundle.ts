// The console's download (issue 16): the JavaScript a browser fetches before the sign-in form is
// interactive, as sent (compressed) and as code, and the whole console's JavaScript, from the
// built out/renderer served by the real server. Reference: the same files' own sizes, so the
// compression ratio is read side by side. Run `npm run build` first (npm run bench does).
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { launchBrowser } from "../test/helpers/browser.js";
import { CONSOLE_DIR } from "../test/helpers/console-page.js";
import { startBenchServer } from "./lib/server.js";
import { report } from "./report.js";

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

const bench = await startBenchServer("console-bundle", { rendererDir: CONSOLE_DIR });
const browser = await launchBrowser();
try {
  const page = await browser.browser.newPage();
  const scripts: Promise<{ url: string; sent: number }>[] = [];
  page.on("requestfinished", (request) => {
    if (request.resourceType() === "script") scripts.push(request.sizes().then((s) => ({ url: request.url(), sent: s.responseBodySize })));
  });
  await page.goto(`${bench.server.url}/#/login`);
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  const before = await Promise.all(scripts);
  const sent = before.reduce((sum, s) => sum + s.sent, 0);
  let code = 0;
  for (const s of before) code += (await stat(join(CONSOLE_DIR, new URL(s.url).pathname))).size;

  const assets = join(CONSOLE_DIR, "assets");
  const files = (await readdir(assets)).filter((f) => f.endsWith(".js"));
  let total = 0;
  let totalGzip = 0;
  for (const f of files) {
    const data = await readFile(join(assets, f));
    total += data.length;
    totalGzip += gzipSync(data, { level: 9 }).length;
  }
  report("console-bundle", [
    ["scripts before the sign-in form is interactive", `${before.length} (${before.map((s) => new URL(s.url).pathname.replace("/assets/", "")).join(", ")})`],
    ["their bytes as sent (compressed)", `${kb(sent)} (target < 120 KB)`],
    ["their code", kb(code)],
    ["all JavaScript shipped, files", String(files.length)],
    ["all JavaScript shipped, code / gzip", `${kb(total)} / ${kb(totalGzip)}`],
  ]);
  await page.close();
} finally {
  await browser.close();
  await bench.close();
}
