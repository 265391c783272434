// The callflow executor with stand-in modules: the tree walked child by child, failures passed on
// or sent to the caller, unknown and broken modules, break, and a takeover that lets go.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CallflowExecutor, ModuleRegistry, nodeOf, type CallflowModule } from "../../server/calls/callflow-executor.js";
import { Channel } from "../../server/calls/channel.js";
import { CallContext } from "../../server/calls/context.js";
import { callflowFor } from "../../server/calls/routing.js";
import { isAnonymous } from "../../server/calls/blocklist.js";
import { bestFailure } from "../../server/calls/hangup-cause.js";
import { EventBus } from "../../server/events/bus.js";
import { MediaEngine } from "../../server/media/index.js";
import { Store, type StoredDoc } from "../../server/store/index.js";
import { identity, ManualClock, StubInbound, StubLeg } from "../helpers/channel-stubs.js";

let dir: string;
let ctx: CallContext;
const logged: string[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "sb-executor-"));
  const clock = new ManualClock();
  const store = await Store.open({ dir });
  const log = (obj: object, msg: string) => logged.push(`${msg} ${JSON.stringify(obj)}`);
  ctx = new CallContext({ store, bus: new EventBus(clock), media: new MediaEngine(), clock, logger: { info: log, warn: log, error: log } });
});

afterAll(async () => {
  await ctx.store.close();
  await rm(dir, { recursive: true, force: true });
});

function channel(): { channel: Channel; call: StubInbound } {
  const call = new StubInbound(`call-${Math.random()}`);
  return { channel: new Channel({ sip: { direction: "inbound", call }, media: new StubLeg(), identity: identity(), clock: ctx.clock, bus: ctx.bus }), call };
}

async function run(flow: unknown, modules: ModuleRegistry, target = channel()) {
  const node = nodeOf(flow);
  if (!node) throw new Error("bad flow");
  const executor = new CallflowExecutor({ channel: target.channel, flow: node, callflowId: "cf", ctx, modules, signal: target.channel.claim() });
  await executor.run();
  return target;
}

/** A module that records its name and answers with `outcome`. */
function recording(trail: string[], name: string, outcome: Awaited<ReturnType<CallflowModule>>): CallflowModule {
  return async () => {
    trail.push(name);
    return outcome;
  };
}

describe("callflow executor", () => {
  it("runs the root, then the child each module picks, and hangs up when the flow runs out", async () => {
    const trail: string[] = [];
    const modules = new ModuleRegistry()
      .register("answer", async ({ channel: c }) => {
        trail.push("answer");
        await c.answer();
        return { kind: "continue", branch: "2" };
      })
      .register("two", recording(trail, "two", { kind: "continue" }))
      .register("other", recording(trail, "other", { kind: "continue" }))
      .register("last", recording(trail, "last", { kind: "continue" }));
    const flow = {
      module: "answer",
      data: {},
      children: {
        "1": { module: "other", data: {}, children: {} },
        "2": { module: "two", data: {}, children: { _: { module: "last", data: {}, children: {} } } },
      },
    };
    const { channel: c, call } = await run(flow, modules);
    expect(trail).toEqual(["answer", "two", "last"]);
    expect(call.actions.at(-1)).toBe("BYE");
    expect(c.hangupCause).toBe("NORMAL_CLEARING");
  });

  it("a failure goes on with the '_' child, or refuses the caller with its code when there is none", async () => {
    const trail: string[] = [];
    const modules = new ModuleRegistry()
      .register("busy", recording(trail, "busy", { kind: "failed", code: 486, cause: "USER_BUSY" }))
      .register("fallback", recording(trail, "fallback", { kind: "failed", code: 480, cause: "NO_ANSWER" }));
    const alone = await run({ module: "busy", data: {}, children: {} }, modules);
    expect(alone.call.actions).toEqual(["reject 486"]);
    const chained = await run({ module: "busy", data: {}, children: { _: { module: "fallback", data: {}, children: {} } } }, modules);
    expect(trail).toEqual(["busy", "busy", "fallback"]);
    expect(chained.call.actions).toEqual(["reject 480"]);
    expect(chained.channel.hangupCause).toBe("NO_ANSWER");
  });

  it("a module the engine does not run ends the call 501 with a log; one that throws ends it 500", async () => {
    const unknown = await run({ module: "callq", data: {}, children: {} }, new ModuleRegistry());
    expect(unknown.call.actions).toEqual(["reject 501"]);
    expect(logged.some((l) => l.includes("callflow module not available") && l.includes('"module":"callq"'))).toBe(true);
    const broken = await run(
      { module: "boom", data: {}, children: {} },
      new ModuleRegistry().register("boom", async () => {
        throw new Error("kaput");
      }),
    );
    expect(broken.call.actions).toEqual(["reject 500"]);
  });

  it("break leaves the running step for its '_' child", async () => {
    const trail: string[] = [];
    const modules = new ModuleRegistry()
      .register("wait", async ({ signal }) => {
        trail.push("wait");
        await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return { kind: "failed", code: 480, cause: "NO_ANSWER" };
      })
      .register("next", recording(trail, "next", { kind: "failed", code: 404, cause: "UNALLOCATED_NUMBER" }));
    const target = channel();
    const node = nodeOf({ module: "wait", data: {}, children: { _: { module: "next", data: {}, children: {} } } });
    if (!node) throw new Error("bad flow");
    const executor = new CallflowExecutor({ channel: target.channel, flow: node, callflowId: "cf", ctx, modules, signal: target.channel.claim() });
    expect(executor.break()).toBe(false);
    const running = executor.run();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(executor.module).toBe("wait");
    expect(executor.break()).toBe(true);
    await running;
    expect(trail).toEqual(["wait", "next"]);
    expect(target.call.actions).toEqual(["reject 404"]);
  });

  it("lets go without touching the call when other logic claims the channel", async () => {
    const modules = new ModuleRegistry().register("wait", async ({ signal }) => {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
      return { kind: "failed", code: 480, cause: "NO_ANSWER" };
    });
    const target = channel();
    const node = nodeOf({ module: "wait", data: {}, children: {} });
    if (!node) throw new Error("bad flow");
    const executor = new CallflowExecutor({ channel: target.channel, flow: node, callflowId: "cf", ctx, modules, signal: target.channel.claim() });
    const running = executor.run();
    await new Promise((resolve) => setTimeout(resolve, 10));
    target.channel.claim("transfer");
    await running;
    expect(target.call.actions).toEqual([]);
    expect(target.channel.state).toBe("new");
    target.channel.hangup();
  });
});

describe("callflow lookup, anonymity, failure choice", () => {
  const doc = (id: string, data: Record<string, unknown>): StoredDoc => ({ id, rev: "1-x", created: 0, modified: 0, data });

  it("finds a number exactly before any pattern, and skips broken patterns", () => {
    const flows = [doc("pattern", { patterns: ["^1\\d{3}$"] }), doc("broken", { patterns: ["(("] }), doc("exact", { numbers: ["1002"] })];
    expect(callflowFor(flows, "1002")?.id).toBe("exact");
    expect(callflowFor(flows, "1009")?.id).toBe("pattern");
    expect(callflowFor(flows, "55")).toBeUndefined();
  });

  it("tells an anonymous caller by its From or its Privacy header", () => {
    expect(isAnonymous({ user: "anonymous" }, new Map())).toBe(true);
    expect(isAnonymous({ user: "+14155550100", display: "Anonymous" }, new Map())).toBe(true);
    expect(isAnonymous({ user: "+14155550100" }, new Map([["privacy", ["id"]]]))).toBe(true);
    expect(isAnonymous({ user: "+14155550100" }, new Map([["privacy", ["none"]]]))).toBe(false);
  });

  it("gives the caller a global refusal first, then busy, then the first answer", () => {
    expect(bestFailure([480, 486, 603])).toBe(603);
    expect(bestFailure([480, 486])).toBe(486);
    expect(bestFailure([408, 480])).toBe(408);
    expect(bestFailure([])).toBeUndefined();
  });
});
