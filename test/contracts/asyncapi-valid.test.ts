// /v2/asyncapi.json as AsyncAPI tools read it: the AsyncAPI initiative's own parser loads it
// with no error, and it names every message the websocket, the webhooks and the relay send.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Parser, DiagnosticSeverity, type AsyncAPIDocumentInterface, type Diagnostic } from "@asyncapi/parser";
import { startApi, type TestApi } from "../helpers/api.js";
import { HOOK_NAMES } from "../../server/api/webhooks.js";

let api: TestApi;
let doc: Record<string, unknown>;
let document: AsyncAPIDocumentInterface | undefined;
let diagnostics: Diagnostic[];
beforeAll(async () => {
  api = await startApi();
  const res = await fetch(`${api.url}/v2/asyncapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  doc = (await res.json()) as Record<string, unknown>;
  // Parsing runs the AsyncAPI ruleset: once for all the checks below.
  ({ document, diagnostics } = await new Parser().parse(JSON.stringify(doc)));
}, 60_000);
afterAll(async () => {
  await api.close();
});

describe("AsyncAPI document", () => {
  it("parses with @asyncapi/parser as AsyncAPI 3.0 with no error diagnostic", () => {
    const errors = diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error).map((d) => `${d.path.join("/")}: ${d.message}`);
    expect(errors).toEqual([]);
    expect(document?.version()).toBe("3.0.0");
    const channels = document?.channels().all().map((c) => c.id()) ?? [];
    expect(channels.sort()).toEqual(["events", "textingRelay", "webhooks"]);
  });

  it("has the requests, replies and one event message per binding family", () => {
    const events = document?.channels().get("events");
    const names = events?.messages().all().map((m) => m.id()) ?? [];
    for (const name of ["subscribe", "unsubscribe", "ping", "reply", "tooSlow", "callEvent", "objectEvent", "callqQueueEvent", "callqRecipientEvent", "callqSessionEvent", "notificationEvent", "textingEvent"]) {
      expect(names).toContain(name);
    }
    const receive = document?.operations().all().filter((o) => o.action() === "receive") ?? [];
    expect(receive.every((o) => o.reply()?.messages().all().some((m) => m.id() === "reply"))).toBe(true);
  });

  it("has a payload for every hook a webhook can fire, each a hook of the catalogue", () => {
    const hooks = document?.channels().get("webhooks")?.messages().all().map((m) => m.id()) ?? [];
    expect(hooks.length).toBeGreaterThanOrEqual(15);
    for (const hook of hooks) expect(HOOK_NAMES as readonly string[]).toContain(hook);
    expect(document?.channels().get("textingRelay")?.messages().all().map((m) => m.id())).toEqual(["relay"]);
  });
});
