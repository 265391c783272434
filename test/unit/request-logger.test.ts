// A request's logger makes its pino child only when the request logs: every line still
// carries the request's id (and the options Fastify gives, such as a route's level).
import { Writable } from "node:stream";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { RequestLogger } from "../../server/http/request-logger.js";

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
