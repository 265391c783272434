// The REST benches' reference: Fastify alone, answering GET by id with bytes it was handed, from
// a Map, and a device list (any query) with the bytes handed for that query string (`?...`). Run as a child process (`node --import tsx bench/lib/bare-fastify.ts <bodies.json>`); it
// prints the URL it serves on. What Switchboard spends beyond this is our own cost per request.
import { readFile } from "node:fs/promises";
import Fastify from "fastify";

const file = process.argv[2];
if (file === undefined) throw new Error("usage: bare-fastify.ts <file of {id: body} JSON>");
const bodies = new Map(Object.entries(JSON.parse(await readFile(file, "utf8")) as Record<string, string>));
const app = Fastify({ logger: false });
app.get<{ Params: { account_id: string; id: string } }>("/v2/accounts/:account_id/devices/:id", async (request, reply) => {
  const body = bodies.get(request.params.id);
  if (body === undefined) return reply.status(404).send({ error: "404" });
  return reply.type("application/json; charset=utf-8").send(body);
});
app.get("/v2/accounts/:account_id/devices", async (request, reply) => {
  const at = request.url.indexOf("?");
  const body = bodies.get(at < 0 ? "" : request.url.slice(at));
  if (body === undefined) return reply.status(404).send({ error: "404" });
  return reply.type("application/json; charset=utf-8").send(body);
});
const address = await app.listen({ host: "127.0.0.1", port: 0 });
process.stdout.write(`bare fastify serving ${address}\n`);
// Exits on SIGTERM rather than dying of it, so a --cpu-prof profile is written.
process.once("SIGTERM", () => void app.close().then(() => process.exit(0)));
