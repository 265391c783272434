// Callflow module `play`: answers the call and plays a media id or URI (data.id, or data.uri; WAV
// media, tone_stream://, silence_stream://) to the caller, then the flow goes on.
import { silence, type AudioSource, type FrameClock } from "../../media/index.js";
import type { CallflowModule } from "../callflow-executor.js";

export const playModule: CallflowModule = async (run) => {
  const { channel, ctx, data, signal } = run;
  const wanted = typeof data.id === "string" ? data.id : typeof data.uri === "string" ? data.uri : undefined;
  const uri = wanted === undefined ? undefined : await ctx.library.uriOf(channel.accountId, wanted);
  if (uri === undefined) {
    // As the hosted service: media that cannot be played is skipped, the flow goes on.
    ctx.logger.warn({ call_id: channel.id, media: wanted }, "play module: nothing playable");
    return { kind: "continue" };
  }
  let source: AudioSource;
  try {
    source = await ctx.media.player(uri);
  } catch (err) {
    ctx.logger.warn({ err, call_id: channel.id, media: wanted }, "play module: cannot play");
    return { kind: "continue" };
  }
  if (!(await channel.answer()) || signal.aborted) return { kind: "handled" };
  channel.media.play(source);
  await played(ctx.media.clock, source, signal);
  if (channel.state !== "hungup" && !channel.bridged) channel.media.play(silence);
  return { kind: "continue" };
};

/** Resolves once the source has played out (never, for an endless tone) or the step is left. */
function played(clock: FrameClock, source: AudioSource, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      stop();
      signal.removeEventListener("abort", done);
      resolve();
    };
    const stop = clock.subscribe(() => {
      if (source.ended) done();
    });
    if (signal.aborted) done();
    else signal.addEventListener("abort", done, { once: true });
  });
}
