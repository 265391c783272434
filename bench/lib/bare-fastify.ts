// The REST benches' reference: Fastify alone, answering GET by id with bytes it was handed, from
// a Map, and a device list (any query) with the bytes handed for that query string (`?...`). Run as
// a child process (`node --import tsx bench/lib/bare-fastify.ts <bodies.json> [<same.json>]`); it
// prints the URL it serves on. What Switchboard spends beyond this is our own cost per request.
//
// With a second file (`{token, headers}`), it does the same work as Switchboard's answer, done
// simply: it refuses a Host that is not the address it serves on (421) and a request without that
// token in X-Auth-Token (401), and sends the same headers (a fresh 32-hex-digit X-Request-ID, the
// security headers, ETag: the revision in the body), so the two answers are the same bytes but for
// the request id and the Date. Without it, only the body: the reference of sessions 11-13.
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import Fastify, { type FastifyReply, type FastifyRequest } from "fastify";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: bare-fastify.ts <file of {id: body} JSON> [<file of {token, headers} JSON>]");
const bodies = new Map(Object.entries(JSON.parse(await readFile(file, "utf8")) as Record<string, string>));
const sameFile = process.argv[3];
const same = sameFile === undefined ? undefined : (JSON.parse(await readFile(sameFile, "utf8")) as { token: string; headers: Record<string, string> });
/** Each body's ETag: the envelope's revision, as Switchboard sends it. */
const etags = new Map([...bodies].map(([k, body]) => [k, `"${(JSON.parse(body) as { revision?: string }).revision ?? ""}"`]));
let host = "";

const app = Fastify({ logger: false });
/** The body for `key`, with Switchboard's checks and headers when asked to do the same work. */
function answer(request: FastifyRequest, reply: FastifyReply, key: string): FastifyReply {
  if (same !== undefined) {
    if (request.headers.host !== host) return reply.status(421).send({ error: "421" });
    if (request.headers["x-auth-token"] !== same.token) return reply.status(401).send({ error: "401" });
    reply.header("X-Request-ID", randomUUID().replaceAll("-", "")).headers(same.headers).header("ETag", etags.get(key) ?? '""');
  }
  const body = bodies.get(key);
  if (body === undefined) return reply.status(404).send({ error: "404" });
  return reply.type("application/json; charset=utf-8").send(body);
}
app.get<{ Params: { account_id: string; id: string } }>("/v2/accounts/:account_id/devices/:id", async (request, reply) => answer(request, reply, request.params.id));
app.get("/v2/accounts/:account_id/devices", async (request, reply) => {
  const at = request.url.indexOf("?");
  return answer(request, reply, at < 0 ? "" : request.url.slice(at));
});
const address = await app.listen({ host: "127.0.0.1", port: 0 });
host = new URL(address).host;
process.stdout.write(`bare fastify serving ${address}\n`);
// Exits on SIGTERM rather than dying of it, so a --cpu-prof profile is written.
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
