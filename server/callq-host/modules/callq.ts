// Callflow module `callq`: answers the caller, plays the queue's hold treatment on a loop and waits
// in the queue (data.queue_id or data.id) until a recipient takes the call, the caller leaves, or
// the wait times out (then the timeout_redirect queue, or the callflow's next step).
import { silence, type AudioSource } from "../../media/index.js";
import type { CallflowModule, ModuleOutcome, ModuleRun } from "../../calls/callflow-executor.js";
import type { CallqEngine } from "../../callq/engine.js";
import type { SessionEnd } from "../../callq/ports.js";
import { queueConfigOf, type CallbackConfig } from "../../callq/queue-config.js";
import type { ChannelDtmf } from "../../calls/channel.js";
import { CallbackQueuedCall } from "../callback-call.js";
import { ChannelQueuedCall } from "../queued-call.js";
import { DEFAULT_CALLBACK_PROMPT, DEFAULT_SUCCESS_MEDIA, playPrompt } from "./prompts.js";

/** How many timeout_redirect hops one caller may take: queues redirecting in a circle end here. */
export const MAX_REDIRECTS = 5;

export function queueIdOf(data: Record<string, unknown>): string {
  const id = data.queue_id ?? data.id;
  return typeof id === "string" ? id : "";
}

export function callqModule(engine: CallqEngine): CallflowModule {
  return async (run) => {
    const { channel, ctx, signal } = run;
    let queueId = queueIdOf(run.data);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      const treatment = await holdTreatment(run, queueId);
      if (treatment === undefined) {
        ctx.logger.warn({ call_id: channel.id, queue_id: queueId }, "callq module: no such queue");
        return { kind: "failed", code: 404, cause: "UNALLOCATED_NUMBER" };
      }
      if (!(await channel.answer()) || signal.aborted) return { kind: "handled" };
      const callback = await callbackOf(run, queueId);
      // Listening from before the announcement: a digit pressed over it counts once the caller is in.
      const listener = callback ? offerCallback(run, engine, queueId, callback.digit) : undefined;
      if (callback) await playPrompt(ctx, channel, undefined, DEFAULT_CALLBACK_PROMPT, signal);
      if (signal.aborted) {
        listener?.stop();
        return { kind: "handled" };
      }
      channel.media.play(treatment);
      // One QueuedCall per queue: a redirected caller's departure is no news to the queue before.
      const end = await engine.join(channel.accountId, queueId, new ChannelQueuedCall(ctx, channel, signal), () => listener?.joined());
      listener?.stop();
      if (signal.aborted) return { kind: "handled" };
      if (end.kind === "callback") {
        // The caller keeps their place without holding the line: they hear it agreed, then the call ends.
        await playPrompt(ctx, channel, undefined, DEFAULT_SUCCESS_MEDIA, signal);
        if (!channel.over) channel.hangup("NORMAL_CLEARING");
        return { kind: "handled" };
      }
      const outcome = outcomeOf(end.kind);
      if (end.kind === "timeout" && end.redirect !== undefined && end.redirect !== "") {
        if (hop === MAX_REDIRECTS) {
          ctx.logger.warn({ call_id: channel.id, queue_id: queueId, redirect: end.redirect }, "callq module: too many timeout redirects; going on with the callflow");
          return leave(run, { kind: "continue" });
        }
        queueId = end.redirect;
        continue;
      }
      if (end.kind === "no_queue") ctx.logger.warn({ call_id: channel.id, queue_id: queueId }, "callq module: the queue is gone");
      return leave(run, outcome);
    }
    return leave(run, { kind: "continue" });
  };
}

function outcomeOf(kind: SessionEnd["kind"]): ModuleOutcome {
  switch (kind) {
    case "handled":
    case "abandoned":
    case "callback":
    case "callback_failed":
      return { kind: "handled" };
    case "timeout":
    case "removed":
      return { kind: "continue" };
    case "no_queue":
      return { kind: "failed", code: 404, cause: "UNALLOCATED_NUMBER" };
  }
}

/** The queue's callback setting (local addition), when it offers them. */
async function callbackOf(run: ModuleRun, queueId: string): Promise<CallbackConfig | undefined> {
  const { channel, ctx } = run;
  const doc = (await ctx.store.account(channel.accountId, "callq_queues")).get(queueId);
  return doc ? queueConfigOf(doc.id, doc.data).callback : undefined;
}

/**
 * Listens for the queue's callback digit from the announcement on; once the caller is in the
 * queue (`joined`), the digit asks the engine to turn their session into a callback to their
 * number. A caller with no number to call back (anonymous, an extension) keeps waiting.
 */
function offerCallback(run: ModuleRun, engine: CallqEngine, queueId: string, digit: string): { joined(): void; stop(): void } {
  const { channel, ctx, signal } = run;
  let asked = false;
  let inQueue = false;
  /** The digit came before the caller was in the queue. */
  let pending = false;
  const ask = (): void => {
    const number = channel.identity.caller.number;
    if (!CALLBACK_NUMBER.test(number)) {
      ctx.logger.info({ call_id: channel.id, queue_id: queueId }, "callq module: a callback asked with no number to call back");
      return;
    }
    asked = true;
    const callback = new CallbackQueuedCall(ctx, {
      callId: channel.id,
      caller: { name: channel.identity.caller.name, number },
      realm: channel.identity.realm,
      dialled: channel.identity.destination,
    });
    engine.requestCallback(channel.accountId, queueId, channel.id, callback).catch((err: unknown) => {
      asked = false;
      ctx.logger.warn({ err, call_id: channel.id, queue_id: queueId }, "callq module: the callback was refused");
    });
  };
  const onDtmf = (dtmf: ChannelDtmf): void => {
    if (dtmf.digit !== digit || asked || channel.bridged) return;
    if (inQueue) ask();
    else pending = true;
  };
  channel.on("dtmf", onDtmf);
  const stop = (): void => {
    channel.off("dtmf", onDtmf);
    signal.removeEventListener("abort", stop);
  };
  signal.addEventListener("abort", stop, { once: true });
  return {
    joined() {
      inQueue = true;
      if (pending && !asked) ask();
    },
    stop,
  };
}

/** A number the server can call back: digits, with a leading + (E.164) or not. */
const CALLBACK_NUMBER = /^\+?\d{2,20}$/;

/** The caller stops hearing the treatment when the flow goes on without a bridge. */
function leave(run: ModuleRun, outcome: ModuleOutcome): ModuleOutcome {
  const { channel } = run;
  if (outcome.kind !== "handled" && !channel.over && !channel.bridged) channel.media.play(silence);
  return outcome;
}

/**
 * The queue's hold_treatment (a media id or a tone/silence URI) as a looping source; the
 * account's hold music when it has none or it cannot be played. Undefined: no such queue.
 */
async function holdTreatment(run: ModuleRun, queueId: string): Promise<AudioSource | undefined> {
  const { channel, ctx } = run;
  const doc = queueId === "" ? undefined : (await ctx.store.account(channel.accountId, "callq_queues")).get(queueId);
  if (!doc) return undefined;
  const wanted = queueConfigOf(doc.id, doc.data).holdTreatment;
  const uri = wanted === undefined ? undefined : await ctx.library.uriOf(channel.accountId, wanted);
  if (uri !== undefined) {
    try {
      return await ctx.media.player(uri, { loop: true });
    } catch (err) {
      ctx.logger.warn({ err, call_id: channel.id, queue_id: queueId, media: wanted }, "callq module: hold treatment cannot be played; using hold music");
    }
  } else if (wanted !== undefined) {
    ctx.logger.warn({ call_id: channel.id, queue_id: queueId, media: wanted }, "callq module: hold treatment names nothing playable; using hold music");
  }
  return ctx.library.holdMusic(channel.accountId, undefined);
}
