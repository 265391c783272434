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
//
// A crash must not take the audio with it: beside each scratch WAV lies its document-to-be
// (`<id>.json`), and the next start seals every scratch WAV it finds (sealRecording) and stores it
// as a recording marked `interrupted: true`, holding the audio up to the last second written.
import { createReadStream } from "node:fs";
import { mkdir, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { toGregorianSeconds, type Cancel, type Clock } from "../clock.js";
import { sealRecording } from "../media/index.js";
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

/** What a scratch recording's `<id>.json` holds: enough to store it after a crash. */
interface ScratchNote {
  account_id: string;
  /** The recording's document, but for its duration. */
  document: Record<string, unknown>;
  /** record_min_sec in ms: an interrupted recording shorter than this is dropped too. */
  min_ms: number;
}

export class CallRecordings {
  /** Resolves once the recordings a crash interrupted are stored (the server waits for it). */
  readonly ready: Promise<void>;
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
    this.#scratch = mkdir(scratch, { recursive: true, mode: 0o700 }).then(async () => {
      await this.#recover(scratch);
      return scratch;
    });
    // Told once here; each recording that needs the folder then fails on its own.
    this.ready = this.#scratch.then(
      () => undefined,
      (err: unknown) => ctx.onError(err, "preparing the folder for recordings"),
    );
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
    const scratchId = newId(this.#ctx.store.random);
    const path = join(await this.#scratch, `${scratchId}.wav`);
    const notePath = join(await this.#scratch, `${scratchId}.json`);
    if (bridge.over) return;
    const startedAt = this.#ctx.clock.now();
    const note: ScratchNote = {
      account_id: caller.accountId,
      document: recordingDocument(caller, callee, decision, 0, startedAt),
      min_ms: decision.limits.minMs,
    };
    const recorder = this.#ctx.media.recorder(path);
    recorder.attach(bridge.mixer, caller.id);
    this.#announce("RECORD_START", caller, callee);
    // Beside the audio from its first moments, without holding back the recording or its
    // time_limit: a WAV whose note is missing after a crash cannot be stored. Only a crash needs
    // the note, so failing to write it stops nothing.
    const noted = writeFile(notePath, JSON.stringify(note), { mode: 0o600 }).catch((err: unknown) =>
      this.#ctx.onError(err, `noting the recording of ${caller.id} for crash recovery`),
    );
    try {
      await endOf(this.#ctx.clock, bridge, decision.limits.maxMs);
      this.#announce("RECORD_STOP", caller, callee);
      const result = await recorder.finish();
      if (result.durationMs === 0 || result.durationMs < decision.limits.minMs) return;
      await this.#store(caller.accountId, recordingDocument(caller, callee, decision, result.durationMs, startedAt), result.path);
    } finally {
      // Stored as an attachment (a copy) or dropped: the scratch files go either way.
      await rm(path, { force: true });
      await noted;
      await rm(notePath, { force: true });
    }
  }

  /**
   * Stores each recording a crash cut short, sealed up to its last whole frame and marked
   * `interrupted`; one that cannot be stored stays for the next start. Scratch files without a
   * note (an older version's) cannot be placed in an account and are removed.
   */
  async #recover(scratch: string): Promise<void> {
    const names = new Set(await readdir(scratch));
    for (const name of names) {
      const id = name.replace(/\.(json|wav)$/, "");
      const wav = join(scratch, `${id}.wav`);
      const notePath = join(scratch, `${id}.json`);
      if (!names.has(`${id}.json`)) {
        await rm(join(scratch, name), { force: true });
        continue;
      }
      if (!name.endsWith(".json")) continue;
      try {
        const note = JSON.parse(await readFile(notePath, "utf8")) as ScratchNote;
        const sealed = names.has(`${id}.wav`) ? await sealRecording(wav) : undefined;
        if (sealed && sealed.durationMs > 0 && sealed.durationMs >= note.min_ms) {
          const recordingId = await this.#store(note.account_id, { ...note.document, duration_ms: sealed.durationMs, interrupted: true }, wav);
          this.#ctx.logger.warn(
            { account_id: note.account_id, call_id: note.document.call_id, recording_id: recordingId, duration_ms: sealed.durationMs },
            "calls: a recording was cut short by the server stopping abruptly; its audio up to then is stored, marked interrupted",
          );
        }
        await rm(wav, { force: true });
        await rm(notePath, { force: true });
      } catch (err) {
        this.#ctx.onError(err, `storing the interrupted recording ${id}`);
      }
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

  /** Stores a recording document with its audio; resolves with its id. */
  async #store(accountId: string, document: Record<string, unknown>, audioPath: string): Promise<string> {
    const recordings = await this.#ctx.store.account(accountId, RECORDINGS_COLLECTION);
    // The audio goes in with the document: a recording is never listed before it can be played.
    const doc = await recordings.create(document, {
      modb: true,
      attachment: { name: RECORDING_ATTACHMENT, content: createReadStream(audioPath), contentType: RECORDING_CONTENT_TYPE },
    });
    return doc.id;
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
async function endOf(clock: Clock, bridge: Bridge, maxMs: number | undefined): Promise<void> {
  if (maxMs === undefined) {
    await bridge.ended;
    return;
  }
  let cancel: Cancel | undefined;
  const limit = new Promise<void>((resolve) => (cancel = clock.after(maxMs, resolve)));
  try {
    await Promise.race([bridge.ended, limit]);
  } finally {
    cancel?.();
  }
}

/** Kazoo's words for how a recording started, e.g. "inbound from offnet to user". */
function originOf(decision: RecordingDecision): string {
  const { source, direction, network } = decision;
  return direction === "inbound" ? `inbound from ${network} to ${source}` : `outbound from ${source} to ${network}`;
}

function recordingDocument(caller: Channel, callee: Channel, decision: RecordingDecision, durationMs: number, startedAt: number): Record<string, unknown> {
  const { caller: from, callee: to } = caller.identity;
  const doc: Record<string, unknown> = {
    name: `call_recording_${caller.id}.wav`,
    call_id: caller.id,
    caller_id_name: from.name,
    caller_id_number: from.number,
    callee_id_name: to.name,
    callee_id_number: to.number,
    direction: decision.direction,
    duration_ms: durationMs,
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
