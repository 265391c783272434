// Directory presence (issue 19): 200 users signed in (a token each, an event websocket each
// subscribed to directory.user.*, a SIP device each registered over WebSocket); one user after
// another turns do not disturb on or off through their own preferences, and the figure is the
// time from sending that request to the directory.user event reaching a colleague's socket, and
// reaching every one of the 200 sockets. In one process with the server, so the sockets' reading
// shares the server's event loop: a pessimistic figure.
import { performance } from "node:perf_hooks";
import WebSocket from "ws";
import { SipPhone, SipSocket } from "../test/helpers/sip-client.js";
import { benchLogin, startBenchServer } from "./lib/server.js";
import { percentile, report } from "./report.js";

const USERS = Number(process.env.BENCH_DIRECTORY_USERS ?? 200);
const CHANGES = Number(process.env.BENCH_DIRECTORY_CHANGES ?? 200);
const PASSWORD = "bench-directory";

interface Seen {
  /** user id + do_not_disturb → when each socket saw it. */
  at: Map<string, number[]>;
}

async function main(): Promise<void> {
  // Serve mode allows 100 event sockets per account unless told more (the flag below).
  const bench = await startBenchServer("directory", { eventSockets: { maxPerAccount: USERS + 10 } });
  const url = bench.server.url;
  const admin = await benchLogin(url);
  const call = async (method: string, path: string, token: string, data?: unknown): Promise<{ status: number; body: { data: { id: string } } }> => {
    const res = await fetch(url + path, {
      method,
      headers: { "X-Auth-Token": token, "Content-Type": "application/json" },
      ...(data === undefined ? {} : { body: JSON.stringify({ data }) }),
    });
    return { status: res.status, body: (await res.json()) as { data: { id: string } } };
  };

  const users: { id: string; username: string; token: string }[] = [];
  for (let i = 0; i < USERS; i++) {
    const username = `bench${i}`;
    const made = await call("PUT", `/v2/accounts/${admin.accountId}/users`, admin.token, { first_name: "Bench", last_name: `User ${i}`, username, password: PASSWORD, callq: { enabled: true } });
    if (made.status !== 201) throw new Error(`user ${i}: ${made.status}`);
    users.push({ id: made.body.data.id, username, token: (await benchLogin(url, username, PASSWORD)).token });
  }

  const sockets: SipSocket[] = [];
  for (const user of users) {
    const sip = { username: `dev_${user.username}`, password: `pw-${user.username}-secret` };
    const device = await call("PUT", `/v2/accounts/${admin.accountId}/devices`, admin.token, { name: sip.username, owner_id: user.id, sip });
    if (device.status !== 201) throw new Error(`device ${user.username}: ${device.status}`);
    const socket = await SipSocket.connect(url);
    sockets.push(socket);
    const answer = await new SipPhone(socket, { ...sip, realm: "demo.switchboard.local" }).register({ expires: 3600 });
    if (answer.status !== 200) throw new Error(`register ${user.username}: ${answer.status}`);
  }

  const seen: Seen = { at: new Map() };
  const wsUrl = `${url.replace(/^http/, "ws")}/events`;
  const subscribers = await Promise.all(
    users.map(
      (user) =>
        new Promise<WebSocket>((resolve, reject) => {
          const ws = new WebSocket(wsUrl);
          ws.once("error", reject);
          ws.once("open", () => {
            ws.once("message", () => resolve(ws));
            ws.send(JSON.stringify({ action: "subscribe", auth_token: user.token, data: { account_id: admin.accountId, binding: "directory.user.*" } }));
          });
          ws.on("message", (raw) => {
            const at = performance.now();
            const m = JSON.parse(raw.toString()) as { action: string; data?: { id?: string; do_not_disturb?: boolean } };
            if (m.action !== "event" || m.data?.id === undefined) return;
            const key = `${m.data.id}/${String(m.data.do_not_disturb)}`;
            const list = seen.at.get(key) ?? [];
            list.push(at);
            seen.at.set(key, list);
          });
        }),
    ),
  );
  // Registrations and logins publish presence too; let them settle before measuring.
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const toColleague: number[] = [];
  const toEveryone: number[] = [];
  for (let i = 0; i < CHANGES; i++) {
    const user = users[i % users.length];
    if (user === undefined) break;
    const dnd = Math.floor(i / users.length) % 2 === 0;
    const key = `${user.id}/${String(dnd)}`;
    seen.at.delete(key);
    const sent = performance.now();
    const res = await call("PATCH", `/v2/accounts/${admin.accountId}/users/${user.id}/preferences`, user.token, { do_not_disturb: { enabled: dnd } });
    if (res.status !== 200) throw new Error(`preferences ${user.username}: ${res.status}`);
    const deadline = sent + 10_000;
    while ((seen.at.get(key)?.length ?? 0) < subscribers.length && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 2));
    const times = seen.at.get(key) ?? [];
    if (times.length < subscribers.length) throw new Error(`change ${i}: ${times.length} of ${subscribers.length} sockets saw it`);
    toColleague.push((times[0] ?? deadline) - sent);
    toEveryone.push(Math.max(...times) - sent);
  }

  for (const ws of subscribers) ws.terminate();
  await Promise.all(sockets.map((s) => s.close()));
  await bench.close();

  const ms = (v: number) => `${v.toFixed(1)} ms`;
  report(`directory: ${USERS} users signed in, ${CHANGES} do-not-disturb changes`, [
    ["to the first colleague's socket, p50", ms(percentile(toColleague, 50))],
    ["to the first colleague's socket, p95 (target < 200 ms)", ms(percentile(toColleague, 95))],
    ["to all sockets, p50", ms(percentile(toEveryone, 50))],
    ["to all sockets, p95", ms(percentile(toEveryone, 95))],
    ["to all sockets, max", ms(Math.max(...toEveryone))],
  ]);
}

await main();
