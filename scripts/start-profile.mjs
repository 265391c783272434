// Where a serve-mode start's main-thread CPU goes (issue 17, "Start"): spawns the built server
// (or a bare Fastify 5 with --bare) under `node --cpu-prof` on a fresh data directory, signs in
// and reads the account as bench/cold-start does, stops it, and lists the profile's samples up to
// that first 200 by owner: the deepest frame of the server's bundle on the stack (so Node's own
// code called by ajv counts as ajv's), grouped by package (pkg:NAME) or by our server folder
// (ours:server/DIR/), before and after the server says it serves. Samples are wall time: on a
// loaded machine whatever was on the stack when the thread was preempted grows, so read shares,
// not milliseconds, and compare with the main thread's CPU from /proc printed beside them.
//
//   SWITCHBOARD_BUNDLE_SOURCEMAP=1 npx electron-vite build   # the map names the bundle's modules
//   node scripts/start-profile.mjs [out/main/server.js] [--bare] [--functions N]
//
// The code cache is the server's usual one, warmed by a first start without the profiler. A CPU
// profile of the process starts no early media worker (server/media/worker/early.ts): the pool
// starts its first worker itself, with the process's flags (its own profile, not read here).
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const bare = args.includes("--bare");
const fnAt = args.indexOf("--functions");
const functions = fnAt >= 0 ? Number(args[fnAt + 1]) : 0;
const root = resolve(import.meta.dirname, "..");
const serverJs = resolve(args.find((a, i) => !a.startsWith("--") && args[i - 1] !== "--functions") ?? join(root, "out/main/server.js"));
const require = createRequire(join(root, "package.json"));

const work = mkdtempSync(join(tmpdir(), "sb-start-profile-"));
const BARE = `import Fastify from ${JSON.stringify(require.resolve("fastify"))};
const app = Fastify();
app.get("/", async () => "ok");
await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write("bare fastify at http://127.0.0.1:" + app.server.address().port + "\\n");
process.on("SIGTERM", () => app.close().then(() => process.exit(0)));
`;

try {
  const entry = bare ? join(work, "bare.mjs") : serverJs;
  if (bare) writeFileSync(entry, BARE);
  if (!bare) await run(entry, []); // warms the code cache
  const profDir = join(work, "prof");
  const times = await run(entry, ["--cpu-prof", `--cpu-prof-dir=${profDir}`, "--cpu-prof-interval=250"]);
  const file = readdirSync(profDir).find((f) => f.endsWith(".001.cpuprofile") || readdirSync(profDir).length === 1);
  if (file === undefined) throw new Error("no profile of the main thread was written");
  const mapFile = `${join(serverJs, "..", "server.cjs")}.map`;
  analyse(JSON.parse(readFileSync(join(profDir, file), "utf8")), times, !bare && existsSync(mapFile) ? mapFile : null);
} finally {
  rmSync(work, { recursive: true, force: true });
}

/** One start to the first 200; the moments (µs, the profiler's clock) it said it served and answered, and /proc's CPU then. */
async function run(entry, flags) {
  const data = mkdtempSync(join(work, "data-"));
  const serveArgs = bare ? [] : ["--port", "0", "--events-port", "0", "--data-dir", data, "--log-level", "warn"];
  const child = spawn(process.execPath, [...flags, entry, ...serveArgs], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise((done) => child.once("exit", done));
  let out = "";
  const url = await new Promise((done, fail) => {
    child.stdout.on("data", (c) => {
      out += c;
      const m = /(?:Switchboard is serving|bare fastify at) (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) done(m[1]);
    });
    child.once("exit", (code) => fail(new Error(`${entry} exited with ${code}: ${out}`)));
  });
  const serving = process.hrtime.bigint() / 1000n;
  const cpuServing = cpuMs(child.pid);
  if (bare) await (await fetch(`${url}/`)).text();
  else {
    const credentials = createHash("md5").update("admin:switchboard").digest("hex");
    const login = await fetch(`${url}/v2/user_auth`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ data: { credentials, account_name: "demo" } }) });
    const body = await login.json();
    if (login.status !== 201) throw new Error(`sign-in answered ${login.status}`);
    const read = await fetch(`${url}/v2/accounts/${body.data.account_id}`, { headers: { "x-auth-token": body.auth_token } });
    await read.text();
    if (read.status !== 200) throw new Error(`the read answered ${read.status}`);
  }
  const answered = process.hrtime.bigint() / 1000n;
  const cpuAnswered = cpuMs(child.pid);
  child.kill("SIGTERM");
  await exited;
  return { serving: Number(serving), answered: Number(answered), cpuServing, cpuAnswered };
}

/** The main thread's CPU (user + system) so far, ms, from /proc. */
function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

function analyse(prof, times, mapFile) {
  const { TraceMap, originalPositionFor } = require("@jridgewell/trace-mapping");
  const map = mapFile ? new TraceMap(readFileSync(mapFile, "utf8")) : null;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sources = new Map();
  const source = (cf) => {
    if (!cf.url) return cf.functionName.startsWith("(") ? cf.functionName : "(native)";
    if (!cf.url.endsWith("server.cjs") || map === null) return cf.url;
    const key = `${cf.lineNumber}:${cf.columnNumber}`;
    if (!sources.has(key)) sources.set(key, originalPositionFor(map, { line: cf.lineNumber + 1, column: cf.columnNumber }).source ?? "server.cjs (no map entry: the bundle's own scope)");
    return sources.get(key);
  };
  const group = (src) => {
    if (src.startsWith("(")) return src;
    let m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(src);
    if (m) return `pkg:${m[1]}`;
    m = /(?:^|\/)server\/([^/]+)(\/)?/.exec(src);
    if (m) return `ours:server/${m[2] ? `${m[1]}/` : m[1]}`;
    if (src.startsWith("node:")) return `node:${src.slice(5).split("/").slice(0, 2).join("/")}`;
    return src.replace(/^file:\/\/.*\//, "");
  };
  const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
  const before = new Map();
  const after = new Map();
  const inclusive = new Map();
  let t = prof.startTime;
  let busy = 0;
  let idle = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i];
    if (t > times.answered) break;
    const ms = (prof.timeDeltas[i + 1] ?? 0) / 1000;
    const leaf = byId.get(prof.samples[i]);
    if (leaf.callFrame.functionName === "(idle)") {
      idle += ms;
      continue;
    }
    busy += ms;
    let owner = null;
    const seen = new Set();
    for (let id = leaf.id; id !== undefined; id = parent.get(id)) {
      const cf = byId.get(id).callFrame;
      const g = group(source(cf));
      if (owner === null && !bare && /server\.(cjs|js)$/.test(cf.url)) owner = g;
      const fn = `${g} ${cf.functionName || "(anonymous)"}`;
      if (!seen.has(fn)) {
        seen.add(fn);
        add(inclusive, fn, ms);
      }
    }
    add(t <= times.serving ? before : after, owner ?? group(source(leaf.callFrame)), ms);
  }
  const show = (title, m, n) => {
    process.stdout.write(`\n${title}\n`);
    for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) process.stdout.write(`${v.toFixed(1).padStart(9)} ms ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}\n`);
  };
  const sum = (m) => [...m.values()].reduce((a, b) => a + b, 0);
  process.stdout.write(
    `${bare ? "bare Fastify 5" : serverJs}: sampled busy ${busy.toFixed(0)} ms to the first 200 (${sum(before).toFixed(0)} before serving, ${sum(after).toFixed(0)} after), idle ${idle.toFixed(0)} ms; ` +
      `main thread's CPU from /proc ${times.cpuServing} ms serving, ${times.cpuAnswered} ms at the first 200${map === null && !bare ? " (no server.cjs.map: build with SWITCHBOARD_BUNDLE_SOURCEMAP=1 to name the bundle's modules)" : ""}\n`,
  );
  show("before serving, by owner", before, 30);
  show("after serving (the first requests), by owner", after, 15);
  if (functions > 0) show("inclusive, by function", inclusive, functions);
}
