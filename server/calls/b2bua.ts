// The B2BUA's front door: an authenticated INVITE becomes an inbound channel, meets the blocklists,
// runs the dialled number's callflow; and the one way a live channel enters a callflow again.
import { OVERLOAD_RETRY_AFTER_S } from "../media/index.js";
import type { InboundCall } from "../sip/call-signalling.js";
import type { StoredDoc } from "../store/index.js";
import { CallflowExecutor, nodeOf, type ModuleRegistry } from "./callflow-executor.js";
import type { Channel, ChannelChange } from "./channel.js";
import { dialNumber } from "./dial.js";
import type { CallContext } from "./context.js";
import { blocklistRefusal, isAnonymous } from "./blocklist.js";
import { callerIdOf, ownerIdOf, presenceIdOf, sipUsernameOf } from "./identity.js";
import { findCallflow } from "./routing.js";

const ANONYMOUS = { name: "anonymous", number: "anonymous" };

/** A number no callflow has that a carrier may take: digits (7 or more), a leading + or not. */
const OUTSIDE_NUMBER = /^\+?\d{7,20}$/;

/** How long an outside number may ring. */
const OUTSIDE_RING_MS = 60_000;

export class B2bua {
  readonly #ctx: CallContext;
  readonly #modules: ModuleRegistry;
  readonly #executors = new Map<string, CallflowExecutor>();
  #closed = false;

  constructor(ctx: CallContext, modules: ModuleRegistry) {
    this.#ctx = ctx;
    this.#modules = modules;
  }

  /** New calls are refused from now on (server shutdown). */
  close(): void {
    this.#closed = true;
  }

  /** Takes an INVITE from a registered device through to its callflow; never throws. */
  async inbound(call: InboundCall): Promise<void> {
    if (this.#closed) {
      call.reject(503, "Service Unavailable");
      return;
    }
    // A media engine that no longer keeps up would make every call worse with one more.
    const overload = this.#ctx.media.refusal();
    if (overload !== undefined) {
      this.#ctx.logger.warn({ call_id: call.callId, reason: overload }, "calls: new call refused");
      call.reject(503, "Media Overloaded", OVERLOAD_RETRY_AFTER_S);
      return;
    }
    let channel: Channel;
    try {
      channel = await this.#open(call);
    } catch (err) {
      this.#ctx.logger.error({ err, call_id: call.callId }, "calls: cannot take the call");
      call.reject(500, "Server Internal Error");
      return;
    }
    try {
      await this.#route(channel, call);
    } catch (err) {
      this.#ctx.logger.error({ err, call_id: call.callId }, "calls: routing failed");
      channel.hangup("NORMAL_TEMPORARY_FAILURE", 500);
    }
  }

  /** The callflow running for a channel now, if any. */
  executorOf(channel: Channel): CallflowExecutor | undefined {
    return this.#executors.get(channel.id);
  }

  /**
   * Runs `callflow` for a channel, taking it over from whatever ran it before (that logic lets
   * go without touching the call). Resolves when the flow is done with the call.
   */
  async run(channel: Channel, callflow: StoredDoc): Promise<void> {
    const signal = channel.claim("callflow");
    const flow = nodeOf(callflow.data.flow);
    if (!flow) {
      this.#ctx.logger.error({ call_id: channel.id, callflow_id: callflow.id }, "calls: the callflow has no readable flow");
      channel.hangup("NORMAL_TEMPORARY_FAILURE", 500);
      return;
    }
    const executor = new CallflowExecutor({ channel, flow, callflowId: callflow.id, ctx: this.#ctx, modules: this.#modules, signal });
    this.#executors.set(channel.id, executor);
    try {
      await executor.run();
    } finally {
      if (this.#executors.get(channel.id) === executor) this.#executors.delete(channel.id);
    }
  }

  /**
   * A number no callflow has, offered to the signalling's carrier (dialOut): answered, the caller
   * is bridged to it; refused, the caller hears why. A number nothing carries is 404 as before.
   */
  async #outside(channel: Channel, number: string): Promise<void> {
    const gone = new AbortController();
    const onState = (change: ChannelChange): void => {
      if (change.to === "hungup") gone.abort();
    };
    channel.on("state", onState);
    const { identity } = channel;
    try {
      const result = await dialNumber(this.#ctx, { accountId: channel.accountId, realm: identity.realm, number, caller: identity.caller, timeoutMs: OUTSIDE_RING_MS, signal: gone.signal, origin: channel });
      if (result.kind === "aborted") return;
      if (result.kind === "failed") {
        if (result.cause === "SUBSCRIBER_ABSENT") channel.hangup("UNALLOCATED_NUMBER", 404);
        else channel.hangup(result.cause, result.code);
        return;
      }
      const far = result.channel;
      if (channel.over || !(await channel.answer())) {
        far.hangup("ORIGINATOR_CANCEL");
        return;
      }
      channel.setCallee(far.identity.callee);
      this.#ctx.bridge(channel, far);
    } finally {
      channel.off("state", onState);
    }
  }

  async #open(call: InboundCall): Promise<Channel> {
    const { store } = this.#ctx;
    const { accountId, deviceId } = call.device;
    const account = (await store.global("accounts")).get(accountId);
    const device = (await store.account(accountId, "devices")).get(deviceId);
    const ownerId = ownerIdOf(device);
    const owner = ownerId === undefined ? undefined : (await store.account(accountId, "users")).get(ownerId);
    const realm = typeof account?.data.realm === "string" ? account.data.realm : "";
    const caller = isAnonymous(call.from, call.headers) ? ANONYMOUS : callerIdOf(device, owner, call.from);
    // A caller inside the server brings the server's side of its media; anyone else gets a leg.
    const media = call.media ?? this.#ctx.media.createLeg();
    try {
      return this.#ctx.channel({
        sip: { direction: "inbound", call },
        media,
        identity: {
          accountId,
          realm,
          deviceId,
          username: device ? sipUsernameOf(device) : call.from.user,
          authorizingType: call.authorizingType,
          ownerId,
          presenceId: device ? presenceIdOf(device, owner, realm) : `${call.from.user}@${realm}`,
          caller,
          callee: { name: call.to.display ?? call.dialled, number: call.dialled },
          destination: call.dialled,
          request: `${call.dialled}@${realm}`,
          from: `${call.from.user}@${realm}`,
          to: `${call.to.user}@${realm}`,
        },
      });
    } catch (err) {
      // No channel owns the leg (a Call-ID already live): release its socket here.
      void media.close("refused");
      throw err;
    }
  }

  async #route(channel: Channel, call: InboundCall): Promise<void> {
    const { store } = this.#ctx;
    const account = (await store.global("accounts")).get(channel.accountId);
    const anonymous = isAnonymous(call.from, call.headers);
    const refusal = await blocklistRefusal(store, account, channel.identity.caller.number, anonymous);
    if (refusal) {
      this.#ctx.logger.info({ call_id: channel.id, caller: channel.identity.caller.number, reason: refusal.reason }, "calls: caller refused by a blocklist");
      channel.hangup("CALL_REJECTED", refusal.code);
      return;
    }
    const callflow = await findCallflow(store, channel.accountId, call.dialled);
    if (!callflow) {
      if (OUTSIDE_NUMBER.test(call.dialled) && this.#ctx.signalling?.dialOut) await this.#outside(channel, call.dialled);
      else channel.hangup("UNALLOCATED_NUMBER", 404);
      return;
    }
    if (channel.state === "hungup") return;
    await this.run(channel, callflow);
  }
}
