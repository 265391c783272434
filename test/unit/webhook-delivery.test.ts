import { describe, expect, it } from "vitest";
import { GREGORIAN_OFFSET_S } from "../../server/clock.js";
import { Delivery, IllegalDeliveryTransition, type DeliveryChange, type DeliveryRecord } from "../../server/events/webhook-delivery.js";
import { buildPayload, formEncode, requestFor, triggerOf } from "../../server/events/webhook-payload.js";
import type { BusEvent } from "../../server/events/index.js";

const ACCOUNT = "0123456789abcdef0123456789abcdef";

function delivery(changes: DeliveryChange[] = [], now = { t: 1_000 }): Delivery {
  const record: DeliveryRecord = { hook_id: "h", hook_event: "channel_create", payload: {}, try: 1, due: now.t, seq: 1 };
  return new Delivery("d", ACCOUNT, record, { now: () => now.t }, (_d, change) => changes.push(change));
}

describe("a delivery's state machine", () => {
  it("goes pending → sending → waiting-retry → sending → succeeded, stamping each change", () => {
    const changes: DeliveryChange[] = [];
    const now = { t: 1_000 };
    const d = delivery(changes, now);
    d.send();
    now.t = 1_050;
    d.retryAfter(2_000, "bad response code");
    expect(d.record).toMatchObject({ try: 2, due: 3_050 });
    d.send();
    d.succeed();
    expect(changes.map((c) => `${c.from}>${c.to}@${c.at}`)).toEqual([
      "pending>sending@1000",
      "sending>waiting-retry@1050",
      "waiting-retry>sending@1050",
      "sending>succeeded@1050",
    ]);
    expect(changes[1]?.reason).toBe("bad response code");
  });

  it("refuses arrows the diagram does not draw", () => {
    const d = delivery();
    expect(() => d.succeed()).toThrow(IllegalDeliveryTransition);
    expect(() => d.retryAfter(1, "x")).toThrow(IllegalDeliveryTransition);
    d.send();
    expect(() => d.cancel("hook deleted")).toThrow(IllegalDeliveryTransition);
    d.fail("retries exceeded");
    expect(d.state).toBe("failed");
    for (const move of [() => d.send(), () => d.succeed(), () => d.cancel("x"), () => d.fail("x")]) expect(move).toThrow(IllegalDeliveryTransition);
  });

  it("cancels from pending and from waiting-retry, never once sending", () => {
    const pending = delivery();
    pending.cancel("hook disabled");
    expect(pending.state).toBe("cancelled");
    const waiting = delivery();
    waiting.send();
    waiting.retryAfter(10, "timeout");
    waiting.cancel("hook deleted");
    expect(waiting.state).toBe("cancelled");
  });
});

describe("webhook payloads and requests", () => {
  const event = (routing_key: string, data: Record<string, unknown>): BusEvent => ({ seq: 1, at: 0, account_id: ACCOUNT, routing_key, name: "", data });

  it("maps routing keys to hooks, and nothing else", () => {
    expect(triggerOf(event("call.CHANNEL_BRIDGE.x", {}))).toEqual({ hook: "channel_bridge" });
    expect(triggerOf(event("notification.voicemail_new.x", {}))).toEqual({ hook: "notifications", notification: "voicemail_new" });
    expect(triggerOf(event("object.doc_deleted.user", {}))).toEqual({ hook: "object" });
    expect(triggerOf(event("call.CHANNEL_PARK.x", {}))).toBeUndefined();
    expect(triggerOf(event("callq.queue.join", {}))).toBeUndefined();
  });

  it("stamps the event time in Gregorian seconds", () => {
    expect(buildPayload(event("call.CHANNEL_CREATE.x", {}), { hook: "channel_create" }).timestamp).toBe(GREGORIAN_OFFSET_S);
  });

  it("form-encodes scalars as text, nested values as JSON, null as empty", () => {
    const body = formEncode({ a: "x y&z", n: 3, b: false, nested: { k: [1] }, none: null, skipped: undefined });
    expect(body).toBe("a=x+y%26z&n=3&b=false&nested=%7B%22k%22%3A%5B1%5D%7D&none=");
    expect(Object.fromEntries(new URLSearchParams(body))).toEqual({ a: "x y&z", n: "3", b: "false", nested: '{"k":[1]}', none: "" });
  });

  it("GET appends to the URI's query and drops the fragment", () => {
    const target = { hookId: "h", accountId: ACCOUNT, httpVerb: "get", format: "form" };
    expect(requestFor({ ...target, uri: "http://r/x#frag" }, { a: 1 }).url).toBe("http://r/x?a=1");
    expect(requestFor({ ...target, uri: "http://r/x?k=%20v" }, { a: 1 }).url).toBe("http://r/x?k=%20v&a=1");
    expect(requestFor({ ...target, uri: "http://r/x?" }, { a: 1 }).url).toBe("http://r/x?a=1");
  });
});
