// The README as a newcomer follows it: its shell examples run as written (only the server's URL
// swapped for the test server's) against serve mode with a fresh data directory and each request
// does what the text says; `npm run serve -- --help` lists the flags its table documents; the data
// folder it suggests is ignored by git; it points at nothing outside the repository.
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials } from "../helpers/api.js";
import { REPO_ROOT, serve, type Served } from "../helpers/serve.js";

const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
const README_URL = "http://127.0.0.1:8000";

let served: Served;

function run(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(command, args, { cwd: REPO_ROOT, env, timeout: 60_000 }, (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
  });
}

/** The fenced sh blocks of one `## ` section, in order. */
function shellBlocks(section: string): string[] {
  const start = README.indexOf(`## ${section}\n`);
  expect(start, `the README has a "${section}" section`).toBeGreaterThanOrEqual(0);
  const end = README.indexOf("\n## ", start + 1);
  const text = README.slice(start, end < 0 ? undefined : end);
  return [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
}

async function api<T>(method: string, path: string, token: string): Promise<T> {
  const res = await fetch(`${served.url}${path}`, { method, headers: { "X-Auth-Token": token } });
  expect(res.status, `${method} ${path}`).toBe(200);
  return ((await res.json()) as { data: T }).data;
}

beforeAll(async () => {
  served = await serve();
});

afterAll(async () => {
  await served?.stop();
});

describe("README", () => {
  it("its shell examples run as written, each request succeeding and doing what the text says", async () => {
    const blocks = shellBlocks("Try it from a shell");
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    // A newline after each block, as a terminal would show it: curl prints the answer without one.
    const script = blocks.join("\necho\n").replaceAll(README_URL, served.url);
    expect(script).not.toContain(README_URL);
    const { code, stdout, stderr } = await run("bash", ["-euo", "pipefail", "-c", script]);
    expect(stderr).toBe("");
    expect(code, stdout).toBe(0);
    // Every request that prints its answer answered with the success envelope.
    const answers = stdout
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { status: string });
    expect(answers.length).toBe(4);
    for (const answer of answers) expect(answer.status).toBe("success");

    const login = await fetch(`${served.url}/v2/user_auth`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ data: { credentials: credentials("admin", "switchboard"), account_name: "demo" } }),
    });
    const { auth_token: token, data } = (await login.json()) as { auth_token: string; data: { account_id: string } };
    const account = `/v2/accounts/${data.account_id}`;
    const users = await api<{ id: string; username: string }[]>("GET", `${account}/users`, token);
    const agent1 = users.find((u) => u.username === "agent1")?.id ?? "";
    const user = await api<{ call_recording?: unknown }>("GET", `${account}/users/${agent1}`, token);
    expect(user.call_recording).toEqual({ inbound: { offnet: { enabled: true } } });
    const calls = await api<{ caller_id_number?: string; to?: string }[]>("GET", `${account}/sim/calls`, token);
    expect(calls).toMatchObject([{ caller_id_number: "+14155550100" }]);
    const texted = JSON.stringify(answers);
    expect(texted).toContain("Hello, is my order on its way?");
  });

  it("each demo user's texting number in the table is the one the server gave them", () => {
    for (const [user, number] of [
      ["admin", "+14155550101"],
      ["agent1", "+14155550102"],
      ["agent2", "+14155550103"],
      ["agent3", "+14155550104"],
      ["supervisor", "+14155550105"],
    ]) {
      expect(README).toMatch(new RegExp(`\\| \`${user}\` \\|[^\\n]*\\| \\${number} \\|`));
    }
  });

  it("npm run serve -- --help prints every flag of the README's table, and the table every flag it prints", async () => {
    const { code, stdout } = await run("npm", ["run", "--silent", "serve", "--", "--help"]);
    expect(code).toBe(0);
    const printed = new Set([...stdout.matchAll(/^\s+(?:-h, )?(--[a-z-]+)/gm)].map((m) => m[1]));
    const documented = new Set([...README.matchAll(/^\| `(--[a-z-]+)/gm), ...README.matchAll(/, `(--[a-z-]+) /gm)].map((m) => m[1]));
    documented.add("--help");
    expect([...printed].sort()).toEqual([...documented].sort());
  });

  it("the data folder it suggests is ignored by git", async () => {
    expect(README).toContain("--data-dir ./data");
    const { code } = await run("git", ["check-ignore", "-q", "data/accounts.json"]);
    expect(code).toBe(0);
  });

  it("points at nothing outside the repository, and every file it links exists", () => {
    expect(README).not.toMatch(/\.\.\//);
    expect(README).not.toMatch(/\/work\/|shared\/design/);
    const links = [...README.matchAll(/\]\(([^)#]+)\)/g)].map((m) => m[1] ?? "").filter((href) => !/^[a-z]+:/.test(href));
    expect(links.length).toBeGreaterThan(0);
    for (const href of links) expect(existsSync(join(REPO_ROOT, href)), href).toBe(true);
  });
});
