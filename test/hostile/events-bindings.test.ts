// Issue 14, item 9: the event websocket finds an event's bindings through a tree of binding
// segments instead of testing every binding. Checked against the one definition of a match
// (bindingMatches) over random bindings, routing keys and subscribe/unsubscribe sequences (fixed
// seed); and the --events-* flags that bound the sockets.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { bindingMatches } from "../../server/events/bus.js";
import { BindingIndex } from "../../server/events/binding-index.js";
import { ConfigError, parseArgs, type ServerConfig } from "../../server/config.js";

const SEED = 1414;
const ACCOUNTS = ["a1", "a2"];

const segment = fc.constantFrom("CHANNEL_CREATE", "CHANNEL_ANSWER", "queue", "q1", "q2", "device", "x", "");
const family = fc.constantFrom("call", "callq", "qubicle", "object");
const routingKey = fc.tuple(fc.constantFrom("call", "callq", "object"), fc.array(segment, { maxLength: 4 })).map(([f, rest]) => [f, ...rest].join("."));
const binding = fc
  .tuple(family, fc.array(fc.oneof(segment.filter((s) => s !== ""), fc.constant("*"), fc.constant("#")), { minLength: 0, maxLength: 4 }))
  .map(([f, rest]) => [f, ...rest].join("."));

type Step = { op: "add" | "remove"; accountId: string; binding: string };
const step: fc.Arbitrary<Step> = fc.record({ op: fc.constantFrom("add", "add", "remove"), accountId: fc.constantFrom(...ACCOUNTS), binding });

describe("the binding index", () => {
  it("finds exactly the bindings bindingMatches accepts, through any subscribe/unsubscribe history", () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.array(fc.tuple(fc.constantFrom(...ACCOUNTS), routingKey), { minLength: 1, maxLength: 10 }), (steps, events) => {
        const index = new BindingIndex();
        const model = new Map<string, { accountId: string; binding: string }>();
        for (const s of steps) {
          const key = `${s.accountId} ${s.binding}`;
          const held = index.get(s.accountId, s.binding);
          if (s.op === "add" && !held) {
            index.add(s.accountId, s.binding, 0);
            model.set(key, s);
          } else if (s.op === "remove" && held) {
            index.remove(held);
            model.delete(key);
          }
        }
        expect(index.size).toBe(model.size);
        for (const [accountId, key] of events) {
          const found = index
            .matching({ account_id: accountId, routing_key: key })
            .map((s) => s.binding)
            .sort();
          const expected = [...model.values()]
            .filter((m) => m.accountId === accountId && bindingMatches(m.binding, key))
            .map((m) => m.binding)
            .sort();
          expect(found).toEqual(expected);
        }
      }),
      { seed: SEED, numRuns: 2_000 },
    );
  });

  it("keeps subscription order and per-account lists", () => {
    const index = new BindingIndex();
    const first = index.add("a1", "call.#", 0);
    index.add("a2", "call.#", 0);
    const third = index.add("a1", "call.CHANNEL_CREATE.*", 0);
    expect(index.bindingsOf("a1")).toEqual(["call.#", "call.CHANNEL_CREATE.*"]);
    expect(first.order).toBeLessThan(third.order);
    index.remove(first);
    expect(index.holds("a1")).toBe(true);
    index.remove(third);
    expect(index.holds("a1")).toBe(false);
    expect([...index.accounts()]).toEqual(["a2"]);
  });
});

describe("the --events-* flags", () => {
  const defaults = { host: "127.0.0.1", port: 8000, portExplicit: false, dataDir: "d", assetsDir: "a", rendererDir: null, demo: true, allowOrigins: [], logLevel: "info" } satisfies ServerConfig;

  it("set the idle window and the socket caps", () => {
    expect(parseArgs(["--events-idle", "0.5", "--events-max-sockets", "64", "--events-max-per-account=8"], defaults).eventSockets).toEqual({
      idleMs: 500,
      maxSockets: 64,
      maxPerAccount: 8,
    });
    expect(parseArgs([], defaults).eventSockets).toBeUndefined();
  });

  it("refuse what is not a bound", () => {
    for (const args of [["--events-idle", "0"], ["--events-idle", "soon"], ["--events-max-sockets", "0"], ["--events-max-per-account", "-1"], ["--events-max-sockets", "1e3"]]) {
      expect(() => parseArgs(args, defaults), args.join(" ")).toThrow(ConfigError);
    }
  });
});
