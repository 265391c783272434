// Runs a callflow for a channel: module after module from the root, each picking the child to go on
// with ("_" by default); when the flow runs out the call is hung up or refused with the last code.
import type { Channel } from "./channel.js";
import type { CallContext } from "./context.js";
import type { HangupCause } from "./hangup-cause.js";

export type Data = Record<string, unknown>;

/** One step of a flow as stored: `{module, data, children}`; children keyed "_" by default. */
export interface CallflowNode {
  module: string;
  data: Data;
  children: Record<string, unknown>;
}

export type ModuleOutcome =
  /** Go on with the child `branch` ("_" by default); the flow ends when there is none. */
  | { kind: "continue"; branch?: string }
  /** Go on with the "_" child, or refuse (or end) the call with this code when there is none. */
  | { kind: "failed"; code: number; cause: HangupCause }
  /** The module saw the call through (it was bridged and is over); nothing more to do. */
  | { kind: "handled" };

export interface ModuleRun {
  channel: Channel;
  data: Data;
  /** Aborts on a break, when other call logic takes the channel over, and at hangup. */
  signal: AbortSignal;
  ctx: CallContext;
  callflowId: string;
}

export type CallflowModule = (run: ModuleRun) => Promise<ModuleOutcome>;

/** The modules the executor can run, by name; the queue modules register here when they exist. */
export class ModuleRegistry {
  readonly #modules = new Map<string, CallflowModule>();

  register(name: string, module: CallflowModule): this {
    this.#modules.set(name, module);
    return this;
  }

  get(name: string): CallflowModule | undefined {
    return this.#modules.get(name);
  }

  names(): string[] {
    return [...this.#modules.keys()];
  }
}

/** A stored flow node read defensively: the API checked it, but a data file can be hand-edited. */
export function nodeOf(value: unknown): CallflowNode | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const node = value as Data;
  if (typeof node.module !== "string") return undefined;
  const data = isData(node.data) ? node.data : {};
  const children = isData(node.children) ? node.children : {};
  return { module: node.module, data, children };
}

function isData(value: unknown): value is Data {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const BREAK = "break";

export interface ExecutorOptions {
  channel: Channel;
  flow: CallflowNode;
  callflowId: string;
  ctx: CallContext;
  modules: ModuleRegistry;
  /** The channel's control signal this executor holds (Channel.claim). */
  signal: AbortSignal;
}

export class CallflowExecutor {
  readonly #options: ExecutorOptions;
  #step: AbortController | undefined;
  #module: string | undefined;

  constructor(options: ExecutorOptions) {
    this.#options = options;
  }

  /** The callflow document this executor runs (its `call_recording` asks for recording). */
  get callflowId(): string {
    return this.#options.callflowId;
  }

  /** The module running now, if any. */
  get module(): string | undefined {
    return this.#module;
  }

  async run(): Promise<void> {
    const { channel, ctx, modules, signal, callflowId } = this.#options;
    let node: CallflowNode | undefined = this.#options.flow;
    let failure: { code: number; cause: HangupCause } | undefined;
    while (node !== undefined) {
      if (signal.aborted) return;
      const module = modules.get(node.module);
      if (!module) {
        ctx.logger.error({ call_id: channel.id, callflow_id: callflowId, module: node.module }, "callflow module not available; ending the call");
        failure = { code: 501, cause: "SERVICE_NOT_IMPLEMENTED" };
        break;
      }
      const step = new AbortController();
      const relay = () => step.abort(signal.reason);
      signal.addEventListener("abort", relay, { once: true });
      this.#step = step;
      this.#module = node.module;
      let outcome: ModuleOutcome;
      try {
        outcome = await module({ channel, data: node.data, signal: step.signal, ctx, callflowId });
      } catch (err) {
        ctx.logger.error({ err, call_id: channel.id, module: node.module }, "callflow module failed");
        outcome = { kind: "failed", code: 500, cause: "NORMAL_TEMPORARY_FAILURE" };
      } finally {
        signal.removeEventListener("abort", relay);
        this.#step = undefined;
        this.#module = undefined;
      }
      // Taken over (a transfer, another callflow) or hung up: the call is no longer ours.
      if (signal.aborted) return;
      if (step.signal.aborted && step.signal.reason === BREAK) {
        failure = undefined;
        node = nodeOf(node.children._);
        continue;
      }
      if (outcome.kind === "handled") {
        if (channel.state !== "hungup" && !channel.bridged) channel.hangup("NORMAL_CLEARING");
        return;
      }
      if (outcome.kind === "failed") {
        failure = { code: outcome.code, cause: outcome.cause };
        node = nodeOf(node.children._);
      } else {
        failure = undefined;
        const branch = outcome.branch ?? "_";
        node = nodeOf(node.children[branch] ?? node.children._);
      }
    }
    if (signal.aborted || channel.state === "hungup" || channel.bridged) return;
    if (failure) channel.hangup(failure.cause, failure.code);
    else channel.hangup("NORMAL_CLEARING");
  }

  /**
   * Leaves the current step for its "_" child (the channel command `break`). False when no step
   * is running or the call is bridged: a bridged call has no step to leave.
   */
  break(): boolean {
    if (!this.#step || this.#options.channel.bridged) return false;
    this.#step.abort(BREAK);
    return true;
  }
}
