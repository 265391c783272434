// The call engine's public face: startCalls() wires SIP signalling to the B2BUA, writes CDRs and
// offers the live channels and their commands to the API; close() ends every call for shutdown.
import { B2bua } from "./b2bua.js";
import type { ModuleRegistry } from "./callflow-executor.js";
import { CdrWriter } from "./cdrs.js";
import type { Channels } from "./channels.js";
import { ChannelCommands } from "./commands.js";
import { CallContext, type CallContextOptions } from "./context.js";
import { builtinModules } from "./modules/index.js";
import { CallRecordings } from "./recording.js";
import { Refers } from "./refer.js";

/** The store, the bus, the media engine, SIP signalling (optional), the clock and the log. */
export type CallsDeps = CallContextOptions;

export class CallEngine {
  /** What the engine's parts share: for call logic outside calls/ (the queue's supervision). */
  readonly context: CallContext;
  readonly channels: Channels;
  /** The callflow modules; the queue modules register here. */
  readonly modules: ModuleRegistry;
  readonly commands: ChannelCommands;
  /** Recordings of bridged calls that asked for it. */
  readonly recordings: CallRecordings;
  readonly #b2bua: B2bua;
  readonly #cdrs: CdrWriter;
  #closing: Promise<void> | undefined;

  constructor(deps: CallsDeps) {
    const ctx = new CallContext(deps);
    this.context = ctx;
    this.channels = ctx.channels;
    this.modules = builtinModules();
    this.#b2bua = new B2bua(ctx, this.modules);
    this.commands = new ChannelCommands(ctx, this.#b2bua);
    this.#cdrs = new CdrWriter(deps.store, ctx.channels, ctx.onError);
    this.recordings = new CallRecordings(ctx, (channel) => this.#b2bua.executorOf(channel)?.callflowId);
    deps.signalling?.onInbound((call) => void this.#b2bua.inbound(call));
    // A device's own transfer key: its REFER in any of its calls.
    const refers = new Refers(ctx, this.#b2bua);
    ctx.channels.on("added", (channel) => channel.on("refer", (refer) => refers.take(channel, refer)));
  }

  /** Adds `fields` to the CDRs of a queue session's legs, written or still to come (a disposition). */
  annotateQueueCall(accountId: string, sessionId: string, fields: Record<string, unknown>): void {
    this.#cdrs.annotate(accountId, sessionId, fields);
  }

  /** Refuses new calls, hangs up every live one and waits for their CDRs and recordings. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#b2bua.close();
      for (const channel of this.channels.all()) channel.hangup("SYSTEM_SHUTDOWN");
      await this.#cdrs.flush();
      await this.recordings.flush();
    })();
    return this.#closing;
  }
}

export function startCalls(deps: CallsDeps): CallEngine {
  return new CallEngine(deps);
}

export { Channel, IllegalChannelTransition, type ChannelState, type ChannelParty } from "./channel.js";
export { Channels } from "./channels.js";
export { Bridge, type BridgeEnd } from "./bridge.js";
export type { CallContext } from "./context.js";
export { ChannelCommandError } from "./command-error.js";
export { cdrSortKey, CDRS_COLLECTION, QUEUE_SESSION_VAR } from "./cdrs.js";
export { CallRecordings, RECORDING_ATTACHMENT, RECORDING_CONTENT_TYPE, RECORDINGS_COLLECTION } from "./recording.js";
export type { TransferRequest } from "./transfer.js";
export type { InterceptRequest } from "./intercept.js";
export type { CallflowModule, ModuleOutcome, ModuleRun } from "./callflow-executor.js";
