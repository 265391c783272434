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
});
