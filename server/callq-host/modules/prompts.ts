// What the queue modules play and hear on a caller's channel: a prompt played to its end, and
// digits collected until # or a pause (the callq_recipient pin).
import { silence, type AudioSource, type LegStateChange } from "../../media/index.js";
import type { Channel, ChannelDtmf } from "../../calls/channel.js";
import type { CallContext } from "../../calls/context.js";
import type { Clock } from "../../clock.js";

/** Default prompts, distinct to the ear: two mid beeps ask, a rising pair agrees, a low pair refuses. */
export const DEFAULT_PIN_PROMPT = "tone_stream://%(150,100,660);loops=2";
export const DEFAULT_SUCCESS_MEDIA = "tone_stream://%(150,50,880);%(250,100,1320)";
export const DEFAULT_FAILURE_MEDIA = "tone_stream://%(300,100,330);loops=2";
/** A queue that offers callbacks says so to a caller joining it: three short high beeps. */
export const DEFAULT_CALLBACK_PROMPT = "tone_stream://%(100,100,988);loops=3";

/**
 * Plays a media id or URI (`wanted`, else `fallback`) once to the channel and resolves when it has
 * played out, the channel hung up or `signal` aborted. Media that cannot be played is skipped.
 */
export async function playPrompt(ctx: CallContext, channel: Channel, wanted: unknown, fallback: string, signal: AbortSignal): Promise<void> {
  const given = typeof wanted === "string" && wanted !== "" ? await ctx.library.uriOf(channel.accountId, wanted) : undefined;
  if (typeof wanted === "string" && wanted !== "" && given === undefined) {
    ctx.logger.warn({ call_id: channel.id, media: wanted }, "callq: prompt names nothing playable; using the default");
  }
  let source: AudioSource;
  try {
    source = await ctx.media.player(given ?? fallback);
  } catch (err) {
    ctx.logger.warn({ err, call_id: channel.id, media: given ?? fallback }, "callq: prompt cannot be played");
    return;
  }
  if (signal.aborted || channel.over) return;
  channel.media.play(source);
  await new Promise<void>((resolve) => {
    const done = (): void => {
      stop();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const stop = ctx.media.clock.subscribe(() => {
      if (source.ended) done();
    });
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
  if (!channel.over && !channel.bridged) channel.media.play(silence);
}

/** The longest a module waits for a just-answered caller's media before it plays anyway. */
const MEDIA_UP_MS = 2000;

/**
 * Call before answering: resolves once the caller's media is up (ICE and DTLS), so a short beep
 * played right after the answer is not lost while WebRTC connects; at once for a call already
 * answered, and after MEDIA_UP_MS at worst.
 */
export function mediaUp(clock: Clock, channel: Channel): Promise<void> {
  if (channel.answered) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => {
      cancel();
      channel.media.off("state", onState);
      resolve();
    };
    const onState = (change: LegStateChange): void => {
      if (change.to === "connected" || change.to === "closed") done();
    };
    const cancel = clock.after(MEDIA_UP_MS, done);
    channel.media.on("state", onState);
  });
}

export interface DigitCollection {
  /** The digits up to # or the pause; undefined when the signal aborted or the caller hung up. */
  collect(options: { firstDigitMs: number; interDigitMs: number; maxDigits: number }): Promise<string | undefined>;
  stop(): void;
}

/** Starts listening for DTMF on the channel now, so digits typed over a prompt are kept. */
export function listenForDigits(clock: Clock, channel: Channel, signal: AbortSignal): DigitCollection {
  const buffered: string[] = [];
  let wake: (() => void) | undefined;
  const onDtmf = (dtmf: ChannelDtmf): void => {
    buffered.push(dtmf.digit);
    wake?.();
  };
  channel.on("dtmf", onDtmf);
  const stop = (): void => {
    channel.off("dtmf", onDtmf);
  };
  return {
    stop,
    async collect({ firstDigitMs, interDigitMs, maxDigits }) {
      let digits = "";
      let waitMs = firstDigitMs;
      for (;;) {
        if (signal.aborted || channel.over) return undefined;
        const digit = buffered.shift();
        if (digit !== undefined) {
          if (digit === "#") return digits;
          digits += digit;
          if (digits.length >= maxDigits) return digits;
          waitMs = interDigitMs;
          continue;
        }
        const arrived = await new Promise<boolean>((resolve) => {
          const finish = (value: boolean): void => {
            cancel();
            signal.removeEventListener("abort", onAbort);
            wake = undefined;
            resolve(value);
          };
          const onAbort = (): void => finish(false);
          const cancel = clock.after(waitMs, () => finish(false));
          wake = () => finish(true);
          signal.addEventListener("abort", onAbort, { once: true });
        });
        if (!arrived) return signal.aborted || channel.over ? undefined : digits;
      }
    },
  };
}
