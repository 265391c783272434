// CPU time of a direct path's UDP send, as the media workers make it (a 172-byte datagram to a
// peer socket on 127.0.0.1, a callback for send errors): dgram's own lookup against the shortcut of
// server/media/udp-send.ts, alternating in one process (session 26). The receiver is another
// process (its receive work is not this process's CPU); the sender's figure includes the kernel's
// loopback delivery, which runs in the sending thread.
//
// ROUNDS (default 7), SENDS per round and kind (default 20,000); run under nice on a busy machine.
import { createSocket, type Socket } from "node:dgram";
import { spawn } from "node:child_process";
import { sendWithoutLookup } from "../server/media/udp-send.js";

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const SENDS = Number(process.env.SENDS ?? 20_000);

const receiver = spawn(
  process.execPath,
  [
    "-e",
    `const s = require("node:dgram").createSocket("udp4");
     s.on("message", () => undefined);
     s.bind(0, "127.0.0.1", () => console.log(s.address().port));
     process.stdin.on("end", () => s.close()).resume();`,
  ],
  { stdio: ["pipe", "pipe", "inherit"] },
);
const port = await new Promise<number>((resolve) => receiver.stdout.once("data", (data: Buffer) => resolve(Number(data.toString().trim()))));

async function bound(): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = createSocket("udp4");
    socket.bind(0, "127.0.0.1", () => resolve(socket));
  });
}

const plain = await bound();
const shortcut = await bound();
if (!sendWithoutLookup(shortcut, "127.0.0.1")) throw new Error("no shortcut on this Node");
const packet = Buffer.alloc(172, 1);
let errors = 0;
const afterSend = (error: Error | null): void => {
  if (error) errors++;
};

/** µs of this process's CPU per send, the event loop let run every 50 sends (a tick's worth of legs). */
async function round(socket: Socket): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < SENDS; i++) {
    socket.send(packet, port, "127.0.0.1", afterSend);
    if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setImmediate(resolve));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / SENDS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const results = { lookup: [] as number[], shortcut: [] as number[] };
for (let r = 0; r < ROUNDS; r++) {
  const order: [keyof typeof results, Socket][] = r % 2 === 0 ? [["lookup", plain], ["shortcut", shortcut]] : [["shortcut", shortcut], ["lookup", plain]];
  for (const [kind, socket] of order) results[kind].push(await round(socket));
}
process.stdout.write(
  `udp send, µs of the sending process's CPU per datagram (${ROUNDS} rounds of ${SENDS}):\n` +
    `  dgram's lookup: ${results.lookup.map((x) => x.toFixed(2)).join(" ")} (median ${median(results.lookup).toFixed(2)})\n` +
    `  shortcut:       ${results.shortcut.map((x) => x.toFixed(2)).join(" ")} (median ${median(results.shortcut).toFixed(2)})\n` +
    `  send errors: ${errors}\n`,
);
plain.close();
shortcut.close();
receiver.stdin.end();
