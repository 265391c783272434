// Call recording: when a bridge forms, whether its call is recorded (the devices', their users' or
// the callflow's `call_recording`), then one stereo WAV per bridge stored as a `recordings` document.
//
// The WAV's left channel is the caller's voice and its right channel what the caller hears (the
// other party). It is written to a scratch file while the call goes on and becomes the document's
// attachment only once the bridge is over (hang-up, transfer) or the setting's time_limit is up.
// Who asks, in order: the answering side's device (its own setting wins, even a refusal, as in
// Kazoo), else that device's user; then the calling side's device, else its user; then the
// callflow the call runs (a call into the callflow). A refusal only silences the endpoint it is
// on: another source may still record.
//
// Both legs announce the recording on the bus as the hosted service's call events RECORD_START
// and RECORD_STOP (`call.RECORD_START.<call_id>`), so a console can show that its call is
// recorded. A recording names the users whose legs it holds (private: who may hear it, see
// api/recordings.ts) and the interaction it is part of (calls/interaction.ts).
import { createReadStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { toGregorianSeconds } from "../clock.js";
import type { RecordingResult } from "../media/index.js";
import { newId } from "../store/index.js";
import type { Bridge } from "./bridge.js";
import type { Channel } from "./channel.js";
import type { CallContext } from "./context.js";
import { interactionOf } from "./interaction.js";
import { recordingVerdict, type RecordingDirection, type RecordingLimits, type RecordingNetwork } from "./recording-settings.js";

export const RECORDINGS_COLLECTION = "recordings";
/** The audio's attachment on a recording document. */
export const RECORDING_ATTACHMENT = "call_recording.wav";
export const RECORDING_CONTENT_TYPE = "audio/wav";
/** Unfinished recordings, in the data directory (not memory: calls can be long). */
const SCRATCH_DIR = "recordings.partial";

/** Who asked for a recording, and how. */
export interface RecordingDecision {
  source: "device" | "user" | "callflow";
  direction: RecordingDirection;
  network: RecordingNetwork;
  ownerId?: string;
  limits: RecordingLimits;
}

export class CallRecordings {
  readonly #ctx: CallContext;
  readonly #callflowOf: (channel: Channel) => string | undefined;
  readonly #seen = new WeakSet<Bridge>();
  readonly #work = new Set<Promise<unknown>>();
  readonly #scratch: Promise<string>;

  /** `callflowOf`: the callflow a channel runs now, if any. */
  constructor(ctx: CallContext, callflowOf: (channel: Channel) => string | undefined) {
    this.#ctx = ctx;
    this.#callflowOf = callflowOf;
    // One server owns the data directory (the store's lock): what is there is left from a crash.
    const scratch = join(ctx.store.dir, SCRATCH_DIR);
    this.#scratch = rm(scratch, { recursive: true, force: true }).then(async () => {
      await mkdir(scratch, { recursive: true });
      return scratch;
    });
    // Told once here; each recording that needs the folder then fails on its own.
    this.#scratch.catch((err: unknown) => ctx.onError(err, "preparing the folder for recordings"));
    ctx.channels.on("added", (channel) =>
      channel.on("state", (change) => {
        // A bridge announces its members while it is being built: look it up once it exists.
        if (change.event === "CHANNEL_BRIDGE") queueMicrotask(() => this.#bridged(channel));
      }),
    );
  }

  /** Resolves once every recording of a bridge ended so far is stored (or dropped). */
  async flush(): Promise<void> {
    while (this.#work.size > 0) await Promise.allSettled([...this.#work]);
  }

  #bridged(channel: Channel): void {
    const bridge = this.#ctx.bridgeOf(channel);
    // Both members announce the same bridge: one recording for it.
    if (!bridge || this.#seen.has(bridge)) return;
    this.#seen.add(bridge);
    const work = this.#record(bridge).catch((err: unknown) => this.#ctx.onError(err, `recording the call of ${channel.id}`));
    this.#work.add(work);
    void work.finally(() => this.#work.delete(work));
  }

  async #record(bridge: Bridge): Promise<void> {
    const [caller, callee] = partiesOf(bridge);
    const decision = await this.#decide(caller, callee);
    if (!decision) return;
    const path = join(await this.#scratch, `${newId(this.#ctx.store.random)}.wav`);
    if (bridge.over) return;
    const startedAt = this.#ctx.clock.now();
    const recorder = this.#ctx.media.recorder(path);
    recorder.attach(bridge.mixer, caller.id);
    this.#announce("RECORD_START", caller, callee);
    try {
      await endOf(bridge, decision.limits.maxMs);
      this.#announce("RECORD_STOP", caller, callee);
      const result = await recorder.finish();
      if (result.durationMs === 0 || result.durationMs < decision.limits.minMs) return;
      await this.#store(caller, callee, decision, result, startedAt);
    } finally {
      // Stored as an attachment (a copy) or dropped: the scratch file goes either way.
      await rm(path, { force: true });
    }
  }

  /** Whether a call between these two legs is recorded, and for whom; undefined when nobody asks. */
  async #decide(caller: Channel, callee: Channel): Promise<RecordingDecision | undefined> {
    const { store } = this.#ctx;
    const devices = await store.account(caller.accountId, "devices");
    const users = await store.account(caller.accountId, "users");
    for (const [leg, other] of [
      [callee, caller],
      [caller, callee],
    ] as const) {
      const ownerId = leg.identity.ownerId;
      // An inbound leg is a call its device made; an outbound leg, a call its device was given.
      const direction: RecordingDirection = leg.direction === "inbound" ? "outbound" : "inbound";
      const network = networkOf(other);
      const fromDevice = recordingVerdict(devices.get(leg.identity.deviceId)?.data.call_recording, direction, network);
      const verdict = fromDevice ?? recordingVerdict(ownerId === undefined ? undefined : users.get(ownerId)?.data.call_recording, direction, network);
      if (verdict !== undefined && verdict !== "refused") {
        return { source: fromDevice === undefined ? "user" : "device", direction, network, ownerId, limits: verdict };
      }
    }
    const callflowId = this.#callflowOf(caller) ?? this.#callflowOf(callee);
    const callflow = callflowId === undefined ? undefined : (await store.account(caller.accountId, "callflows")).get(callflowId);
    const network = networkOf(caller);
    const verdict = recordingVerdict(callflow?.data.call_recording, "inbound", network);
    if (verdict === undefined || verdict === "refused") return undefined;
    return { source: "callflow", direction: "inbound", network, ownerId: callee.identity.ownerId ?? caller.identity.ownerId, limits: verdict };
  }

  #announce(event: "RECORD_START" | "RECORD_STOP", ...legs: Channel[]): void {
    for (const leg of legs) {
      this.#ctx.bus.publish({ account_id: leg.accountId, routing_key: `call.${event}.${leg.id}`, name: event, data: leg.eventData() });
    }
  }

  async #store(caller: Channel, callee: Channel, decision: RecordingDecision, result: RecordingResult, startedAt: number): Promise<void> {
    const recordings = await this.#ctx.store.account(caller.accountId, RECORDINGS_COLLECTION);
    // The audio goes in with the document: a recording is never listed before it can be played.
    await recordings.create(recordingDocument(caller, callee, decision, result, startedAt), {
      modb: true,
      attachment: { name: RECORDING_ATTACHMENT, content: createReadStream(result.path), contentType: RECORDING_CONTENT_TYPE },
    });
  }
}

/** The caller first: the leg whose own device placed the call, else the bridge's first leg. */
function partiesOf(bridge: Bridge): [Channel, Channel] {
  return bridge.b.direction === "inbound" && bridge.a.direction !== "inbound" ? [bridge.b, bridge.a] : [bridge.a, bridge.b];
}

/** A simulated caller stands for someone outside the account, as a carrier's call would. */
function networkOf(channel: Channel): RecordingNetwork {
  return channel.identity.authorizingType === "sim" ? "offnet" : "onnet";
}

/** Resolves when the bridge is over, or after `maxMs` if that comes first. */
async function endOf(bridge: Bridge, maxMs: number | undefined): Promise<void> {
  if (maxMs === undefined) {
    await bridge.ended;
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<void>((resolve) => (timer = setTimeout(resolve, maxMs)));
  try {
    await Promise.race([bridge.ended, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** Kazoo's words for how a recording started, e.g. "inbound from offnet to user". */
function originOf(decision: RecordingDecision): string {
  const { source, direction, network } = decision;
  return direction === "inbound" ? `inbound from ${network} to ${source}` : `outbound from ${source} to ${network}`;
}

function recordingDocument(caller: Channel, callee: Channel, decision: RecordingDecision, result: RecordingResult, startedAt: number): Record<string, unknown> {
  const { caller: from, callee: to } = caller.identity;
  const doc: Record<string, unknown> = {
    name: `call_recording_${caller.id}.wav`,
    call_id: caller.id,
    caller_id_name: from.name,
    caller_id_number: from.number,
    callee_id_name: to.name,
    callee_id_number: to.number,
    direction: decision.direction,
    duration_ms: result.durationMs,
    start: toGregorianSeconds(startedAt),
    media_type: "wav",
    content_type: RECORDING_CONTENT_TYPE,
    origin: originOf(decision),
    // The module that writes call recordings in the hosted service; clients may filter on it.
    source_type: "kz_media_recording",
    // Newest first needs more than whole seconds (cdrs.ts sorts on the same key).
    pvt_started_ms: startedAt,
    // The users whose own phones are in the recorded call: who took part (api/recordings.ts).
    pvt_user_ids: [...new Set([caller.identity.ownerId, callee.identity.ownerId].filter((id) => id !== undefined))],
  };
  const interactionId = interactionOf(caller) ?? interactionOf(callee);
  if (interactionId !== undefined) doc.interaction_id = interactionId;
  if (decision.ownerId !== undefined) doc.owner_id = decision.ownerId;
  const queueId = caller.customVars.get("queue_id");
  if (queueId !== undefined) doc.queue_id = queueId;
  return doc;
}
