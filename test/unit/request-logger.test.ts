// A request's logger makes its pino child only when the request logs: every line still
// carries the request's id (and the options Fastify gives, such as a route's level).
import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { RequestLogger } from "../../server/http/request-logger.js";
import { buildApp } from "../../server/http/app.js";
import { ManualClock } from "../../server/clock-control.js";

function logged(): { logger: pino.Logger; lines: () => Record<string, unknown>[]; children: () => number } {
  const text: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text.push(chunk.toString());
      callback();
    },
  });
  const logger = pino({ level: "info", base: { service: "switchboard" } }, destination);
  // Counts the children made of this logger (its own children inherit the count's wrapper).
  let children = 0;
  const child = logger.child;
  logger.child = function (this: pino.Logger, ...args: Parameters<typeof child>) {
    if (this === logger) children++;
    return child.apply(this, args);
  } as typeof logger.child;
  return { logger, lines: () => text.join("").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Record<string, unknown>), children: () => children };
}

describe("a request's logger", () => {
  it("writes every line with the request's id, its child made once and only when the request logs", () => {
    const { logger, lines, children } = logged();
    const log = new RequestLogger(logger, { reqId: "r-1" }, {});
    expect(log.level).toBe("info");
    expect(children()).toBe(0);
    log.debug("not at this level");
    log.error({ err: new Error("boom") }, "request failed");
    log.warn("twice");
    expect(children()).toBe(1);
    log.child({ call_id: "c-1" }).info("from a child");
    expect(lines().map((l) => [l.reqId, l.msg, l.service, l.call_id])).toEqual([
      ["r-1", "request failed", "switchboard", undefined],
      ["r-1", "twice", "switchboard", undefined],
      ["r-1", "from a child", "switchboard", "c-1"],
    ]);
  });

  it("takes a route's level from Fastify's options, and a level set on it", () => {
    const { logger, lines } = logged();
    const log = new RequestLogger(logger, { reqId: "r-2" }, { level: "warn" });
    expect(log.level).toBe("warn");
    log.info("below the route's level");
    log.level = "debug";
    log.debug("now written");
    expect(lines().map((l) => l.msg)).toEqual(["now written"]);
  });
});

describe("the app's loggers (buildApp, session 18)", () => {
  it("log through the given logger with the request's id and Fastify's serializers, and make no child for a request that logs nothing", async () => {
    const { logger, lines, children } = logged();
    const app = buildApp({ logger, clock: new ManualClock(0), hosts: [], allowOrigins: [], port: () => 80, rendererDir: null });
    app.get("/quiet", async () => "ok");
    app.get("/boom", async () => {
      throw new Error("boom");
    });
    await app.ready();
    const made = children();
    const quiet = await app.inject({ method: "GET", url: "/quiet", headers: { host: "localhost" } });
    expect(quiet.statusCode).toBe(200);
    expect(children()).toBe(made);
    const boom = await app.inject({ method: "GET", url: "/boom", headers: { host: "localhost", "x-request-id": "req-boom" } });
    expect(boom.statusCode).toBe(500);
    app.log.warn("from the app");
    const line = lines().find((l) => l.msg === "request failed");
    expect(line?.reqId).toBe("req-boom");
    expect(line?.service).toBe("switchboard");
    // Fastify's err serializer: the error's type, message and stack as fields.
    expect((line?.err as { message?: string; type?: string } | undefined)?.message).toBe("boom");
    expect((line?.err as { type?: string } | undefined)?.type).toBe("Error");
    expect(lines().find((l) => l.msg === "from the app")?.service).toBe("switchboard");
    await app.close();
  });

  it("set up no response listener per request (Fastify has no logger of its own), and still log the listen and at a route's level with the request's id, and answer a framework error (session 19)", async () => {
    const { logger, lines } = logged();
    let port = 0;
    const app = buildApp({ logger, clock: new ManualClock(0), hosts: ["127.0.0.1"], allowOrigins: [], port: () => port, rendererDir: null });
    const seen: number[] = [];
    app.get("/listeners", (_request, reply) => {
      // Fastify with a logger adds its own 'finish' and 'error' listeners before any hook runs.
      seen.push(reply.raw.listenerCount("finish"), reply.raw.listenerCount("error"));
      return reply.send("ok");
    });
    app.get("/quiet-route", { logLevel: "error" }, (request, reply) => {
      request.log.warn("below this route's level");
      request.log.error("at this route's level");
      return reply.send("ok");
    });
    await app.ready();
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    port = Number(new URL(address).port);
    expect(lines().some((l) => typeof l.msg === "string" && l.msg.includes(address))).toBe(true);
    const res = await fetch(`${address}/listeners`);
    expect(res.status).toBe(200);
    await fetch(`${address}/quiet-route`, { headers: { "x-request-id": "req-quiet" } });
    // A path that is not percent-encoding: Fastify's framework error, answered in the envelope.
    const bad = await fetch(`${address}/v2/%zz`, { headers: { "x-request-id": "req-bad" } });
    expect(bad.status).toBe(400);
    await app.close();
    // Node's own listener for the end of an answer is the only one on a real server.
    expect(seen).toEqual([1, 0]);
    expect(lines().filter((l) => l.reqId === "req-quiet").map((l) => l.msg)).toEqual(["at this route's level"]);
  });
});
