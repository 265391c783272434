// The app coalesces Fastify's per-route Avvio `after`s (server/http/route-afters.ts, issue 17
// "Start"): routes declared one after another on one scope share one `after`. Here: it does (the
// `after`s reaching Avvio are counted), and an app built with it answers as one built without it,
// through what a route's `after` reads from its scope when Avvio reaches it: an error handler and
// hooks added later in the same plug-in, a scope's own error handler and hooks, a route's body
// limit and its own hooks, routes declared in an `after`, after a `register`, after an awaited
// `register`, interleaved between the app and a scope, and HEAD beside GET.
import Fastify, { type FastifyInstance } from "fastify";
import { describe, expect, it } from "vitest";
import { coalesceRouteAfters } from "../../server/http/route-afters.js";

interface Counted {
  app: FastifyInstance;
  afters: () => number;
}

/** An app whose Avvio `after` calls are counted (before the coalescing, so only what reaches Avvio). */
function countedApp(coalesce: boolean): Counted {
  const app = Fastify();
  const host = app as unknown as { after: (this: FastifyInstance, ...args: unknown[]) => unknown };
  const after = host.after;
  let count = 0;
  host.after = function (this: FastifyInstance, ...args: unknown[]) {
    if (typeof args[0] === "function") count++;
    return after.apply(this, args);
  };
  if (coalesce) coalesceRouteAfters(app);
  return { app, afters: () => count };
}

const fail = (code: number, message: string): Error => Object.assign(new Error(message), { statusCode: code });

async function build(coalesce: boolean): Promise<Counted> {
  const counted = countedApp(coalesce);
  const { app } = counted;
  app.get("/a", async () => {
    throw fail(418, "a");
  });
  app.get("/plain", async () => ({ ok: true }));
  // Added after /a and /plain in the same plug-in: both still take them.
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => reply.status(err.statusCode ?? 500).send({ handler: "root", message: err.message }));
  app.addHook("onRequest", async (_req, reply) => {
    reply.header("x-root-hook", "1");
  });
  app.post("/limited", { bodyLimit: 10 }, async (req) => ({ got: req.body }));
  app.get("/own-hook", { onRequest: async (_req, reply) => void reply.header("x-own", "1") }, async () => "own");
  app.register(async (scope) => {
    scope.get("/scope/a", async () => {
      throw fail(409, "scope a");
    });
    scope.post("/scope/limited", async (req) => ({ got: req.body }));
    scope.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => reply.status(err.statusCode ?? 500).send({ handler: "scope", message: err.message }));
    scope.addHook("preHandler", async (_req, reply) => {
      reply.header("x-scope-hook", "1");
    });
    scope.get("/scope/b", async () => "b");
  });
  // Declared after a register, before it loads: its own run.
  app.get("/after-register", async () => {
    throw fail(402, "after register");
  });
  app.after(() => {
    app.get("/in-after", async () => "in after");
  });
  await app.register(async (scope) => {
    scope.get("/awaited", async () => "awaited");
  });
  app.get("/after-await", async () => {
    throw fail(403, "after await");
  });
  app.setNotFoundHandler(async (_req, reply) => reply.status(404).send({ missing: true }));
  app.get("/after-404", async () => "after 404");
  await app.ready();
  return counted;
}

const REQUESTS: { method: "GET" | "POST" | "HEAD"; url: string; payload?: unknown }[] = [
  { method: "GET", url: "/a" },
  { method: "GET", url: "/plain" },
  { method: "HEAD", url: "/plain" },
  { method: "POST", url: "/limited", payload: { x: 1 } },
  { method: "POST", url: "/limited", payload: { long: "x".repeat(50) } },
  { method: "GET", url: "/own-hook" },
  { method: "GET", url: "/scope/a" },
  { method: "POST", url: "/scope/limited", payload: { x: 2 } },
  { method: "GET", url: "/scope/b" },
  { method: "HEAD", url: "/scope/b" },
  { method: "GET", url: "/after-register" },
  { method: "GET", url: "/in-after" },
  { method: "GET", url: "/awaited" },
  { method: "GET", url: "/after-await" },
  { method: "GET", url: "/after-404" },
  { method: "GET", url: "/nowhere" },
];

async function answers(app: FastifyInstance): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const r of REQUESTS) {
    const res = await app.inject({ method: r.method, url: r.url, ...(r.payload === undefined ? {} : { payload: r.payload as object }) });
    const { date: _date, ...headers } = res.headers;
    out.push({ request: `${r.method} ${r.url}`, status: res.statusCode, headers, body: res.body });
  }
  return out;
}

describe("Fastify's per-route Avvio afters, coalesced", () => {
  it("queues one Avvio after for a run of routes on one scope, not one a route", async () => {
    const { app, afters } = countedApp(true);
    for (let i = 0; i < 20; i++) app.get(`/r${i}`, async () => i);
    const coalesced = afters();
    await app.ready();
    const plain = countedApp(false);
    for (let i = 0; i < 20; i++) plain.app.get(`/r${i}`, async () => i);
    // 20 GETs and their 20 HEADs: one after each without, one for the run with.
    expect(plain.afters()).toBe(40);
    expect(coalesced).toBe(1);
    expect((await app.inject({ url: "/r7" })).body).toBe("7");
    expect((await app.inject({ method: "HEAD", url: "/r7" })).statusCode).toBe(200);
    await app.close();
    await plain.app.close();
  });

  it("answers every route as an app built without it: error handlers, hooks, body limits, afters, registers", async () => {
    const plain = await build(false);
    const coalesced = await build(true);
    const expected = await answers(plain.app);
    expect(await answers(coalesced.app)).toEqual(expected);
    // What the scenario is made to show, so an app that ignored it would not pass by chance.
    const [a, , , , limited, ownHook, scopeA, , scopeB] = expected as { status: number; headers: Record<string, string>; body: string }[];
    expect(a).toMatchObject({ status: 418, headers: { "x-root-hook": "1" } });
    expect(JSON.parse(a?.body ?? "{}")).toEqual({ handler: "root", message: "a" });
    expect(limited?.status).toBe(413);
    expect(ownHook?.headers["x-own"]).toBe("1");
    expect(JSON.parse(scopeA?.body ?? "{}")).toEqual({ handler: "scope", message: "scope a" });
    expect(scopeB?.headers["x-scope-hook"]).toBe("1");
    expect(coalesced.afters()).toBeLessThan(plain.afters());
    await plain.app.close();
    await coalesced.app.close();
  });
});
