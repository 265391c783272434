// The main thread's half of a leg whose peer connection runs in a media worker. To calls/ it is a
// leg like any other: its state, events and getters mirror the worker's, its jitter FIFO and its
// source stay here on the frame clock, and 20 ms frames cross in shared memory (leg-memory.ts).

import { EventEmitter } from "node:events";
import { randomUuid, systemClock, systemRandom, type Clock, type RandomSource } from "../../clock.js";
import { silence, type AudioSource } from "../audio-frame.js";
import type { DtmfSendOptions } from "../dtmf.js";
import type { FrameClock } from "../frame-clock.js";
import type { FrameFifoOptions } from "../frame-fifo.js";
import type { PathChoiceOptions } from "../path-choice.js";
import type { G711Codec } from "../g711.js";
import { LegStateError, type LegDirection, type LegEvents, type LegStats, type WebRtcLeg } from "../leg-api.js";
import { LegStateMachine, type LegState } from "../leg-state.js";
import { ReceiveBuffer } from "../receive-buffer.js";
import { restrictToG711, SdpError } from "../sdp.js";
import { LegMemory } from "./leg-memory.js";
import type { MediaWorker, WorkerLegHandle } from "./pool.js";
import type { LegCall, LegInfo } from "./protocol.js";

export interface RemoteLegOptions {
  clock: FrameClock;
  worker: MediaWorker;
  id?: string;
  wallClock?: Clock;
  random?: RandomSource;
  codecs?: readonly G711Codec[];
  telephoneEventPayloadType?: number;
  fifo?: FrameFifoOptions;
  connectTimeoutMs?: number;
  maxSendLatenessMs?: number;
  maxForwardLatenessMs?: number;
  /** The direction forwarded to the leg takes its path from its lateness (PeerLeg's choosePath, in the worker). */
  choosePath?: boolean | PathChoiceOptions;
}

export class RemoteLeg extends EventEmitter<LegEvents> implements WebRtcLeg, WorkerLegHandle {
  readonly id: string;
  readonly incoming: AudioSource;
  readonly #clock: FrameClock;
  readonly #worker: MediaWorker;
  readonly #memory = new LegMemory();
  readonly #buffer: ReceiveBuffer;
  readonly #state: LegStateMachine;
  #info: LegInfo = { codec: undefined, direction: undefined };
  #source: AudioSource = silence;
  #drainedTick = -1;
  #unsubscribeTick: (() => void) | undefined;
  #closing: Promise<void> | undefined;
  #closeReason: string | undefined;
  #workerGone = false;
  /** Forwarding on arrival (forward.ts): the source whose playing opens the worker's gate, and the gate. */
  #forwardWhile: AudioSource | undefined;
  #forwardOn = false;
  /** Whether the worker decodes into the ring and this thread drains it (PeerLeg.decode). */
  #decoding = true;

  constructor(options: RemoteLegOptions) {
    super();
    const random = options.random ?? systemRandom;
    this.id = options.id ?? randomUuid(random);
    this.#clock = options.clock;
    this.#worker = options.worker;
    this.#buffer = new ReceiveBuffer(options.fifo);
    this.#state = new LegStateMachine(options.wallClock ?? systemClock, (change) => this.emit("state", change));
    const seed = random.bytes(6);
    this.#worker.create(this.id, this, this.#memory.buffer, {
      codecs: options.codecs,
      telephoneEventPayloadType: options.telephoneEventPayloadType,
      connectTimeoutMs: options.connectTimeoutMs,
      maxSendLatenessMs: options.maxSendLatenessMs,
      maxForwardLatenessMs: options.maxForwardLatenessMs,
      choosePath: options.choosePath,
      seed: new Uint8Array(seed),
    });
    const machine = this.#state;
    this.incoming = {
      read: (tick) => this.#frameFor(tick),
      get ended() {
        return machine.state === "closed";
      },
    };
  }

  get state(): LegState {
    return this.#state.state;
  }

  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  get codec(): G711Codec | undefined {
    return this.#info.codec;
  }

  get direction(): LegDirection | undefined {
    return this.#info.direction;
  }

  /** The thread this leg's peer connection runs on. */
  get threadId(): number {
    return this.#worker.threadId;
  }

  stats(): LegStats {
    const { ringDropped, ...counters } = this.#memory.counters();
    const fifo = { ...this.#buffer.stats };
    // Packets the worker had to drop because this thread did not drain them in time are lost here.
    fifo.dropped += ringDropped;
    return { ...counters, fifo, jitterBufferMs: this.#buffer.jitterBufferMs };
  }

  play(source: AudioSource = silence): void {
    this.#source = source;
    this.#gate();
  }

  /** The worker this leg's peer connection runs in. */
  get worker(): MediaWorker {
    return this.#worker;
  }

  /**
   * The worker sends packets forwarded to this leg (and no audio of its ticks) while this leg
   * plays `source` (the bridge's mix for it); undefined: the tick path only.
   */
  forwardWhile(source: AudioSource | undefined): void {
    this.#forwardWhile = source;
    this.#gate();
  }

  /**
   * Decodes received audio (on, the default) or not (off: only while the leg forwards and nothing
   * needs its decoded audio); off, the receive buffer is emptied and the ticks here read neither
   * it nor the source; on, it fills again from the worker's next packet.
   */
  decode(on: boolean): void {
    if (on === this.#decoding) return;
    this.#decoding = on;
    // Turned on: what the worker put in the ring before it learnt of the off is stale, dropped.
    if (on) this.#memory.drain(this.#buffer);
    this.#buffer.clear();
    if (this.state !== "closed") this.#worker.decode(this.id, on);
  }

  /** Whether this leg's receive buffer played received audio at the last tick. */
  get primed(): boolean {
    return this.#buffer.playing;
  }

  #gate(): void {
    const on = this.#forwardWhile !== undefined && this.#forwardWhile === this.#source;
    if (on === this.#forwardOn) return;
    this.#forwardOn = on;
    if (this.state !== "closed") this.#worker.forwardWhile(this.id, on);
  }

  get source(): AudioSource {
    return this.#source;
  }

  async createOffer(): Promise<string> {
    this.#assertOpen("createOffer");
    if (this.state === "new") this.#state.transition("negotiating");
    return this.#sdp(await this.#call({ op: "createOffer" }));
  }

  async acceptAnswer(sdp: string): Promise<void> {
    this.#assertOpen("acceptAnswer");
    if (this.state === "new") throw new LegStateError("acceptAnswer before createOffer");
    await this.#call({ op: "acceptAnswer", sdp });
  }

  async acceptOffer(sdp: string): Promise<string> {
    this.#assertOpen("acceptOffer");
    // Checked here too, so an offer without G.711 leaves the leg as it was, as in this thread.
    restrictToG711(sdp);
    if (this.state === "new") this.#state.transition("negotiating");
    return this.#sdp(await this.#call({ op: "acceptOffer", sdp }));
  }

  async hold(mode: "sendonly" | "inactive" = "sendonly"): Promise<string> {
    this.#assertConnected("hold");
    return this.#sdp(await this.#call({ op: "hold", mode }));
  }

  async unhold(): Promise<string> {
    this.#assertConnected("unhold");
    return this.#sdp(await this.#call({ op: "unhold" }));
  }

  async sendDtmf(digits: string, options?: DtmfSendOptions): Promise<void> {
    this.#assertOpen("sendDtmf");
    await this.#call({ op: "sendDtmf", digits, options });
  }

  close(reason = "hangup"): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  // --- what the worker reports (WorkerLegHandle) ---

  remoteState(to: string, reason: string | undefined, info: LegInfo): void {
    this.#info = info;
    if (to === "connected" && this.state === "negotiating") {
      this.#state.transition("connected");
      this.#worker.follow(this.#clock);
      this.#unsubscribeTick = this.#clock.subscribe((tick) => this.#tick(tick));
    } else if (to === "closed") {
      void this.close(reason ?? "closed");
    }
  }

  remoteDtmf(digit: { digit: string; durationMs: number }): void {
    if (this.state !== "closed") this.emit("dtmf", digit);
  }

  workerFailed(reason: string): void {
    this.#workerGone = true;
    void this.close(reason);
  }

  // --- here ---

  async #close(reason: string): Promise<void> {
    this.#closeReason = reason;
    if (this.state !== "closed") this.#state.transition("closed", reason);
    this.#unsubscribeTick?.();
    this.#unsubscribeTick = undefined;
    this.#buffer.clear();
    try {
      if (!this.#workerGone) await this.#worker.call(this.id, { op: "close", reason });
    } catch {
      // The worker died meanwhile: its sockets went with it.
    } finally {
      this.#worker.release(this.id);
    }
  }

  async #call(request: LegCall): Promise<{ value?: string; info: LegInfo }> {
    try {
      const reply = await this.#worker.call(this.id, request);
      this.#info = reply.info;
      return reply;
    } catch (error) {
      throw remoteError(error);
    }
  }

  #sdp(reply: { value?: string }): string {
    if (reply.value === undefined) throw new LegStateError("werift produced no local description");
    return reply.value;
  }

  #assertOpen(action: string): void {
    if (this.state === "closed") throw new LegStateError(`${action} on a closed leg`);
  }

  #assertConnected(action: string): void {
    if (this.state !== "connected") throw new LegStateError(`${action} needs a connected leg (it is ${this.state})`);
  }

  #frameFor(tick: number): Int16Array {
    if (tick !== this.#drainedTick) {
      this.#drainedTick = tick;
      this.#memory.drain(this.#buffer);
    }
    return this.#buffer.frameFor(tick);
  }

  #tick(tick: number): void {
    // Forwarding with nothing that needs the decoded audio: no ring to drain, no mix to read.
    if (!this.#forwardOn || this.#decoding) {
      // The receive FIFO drains at the clock's pace even when no bridge reads it, as in a PeerLeg.
      this.#frameFor(tick);
      // The source advances even while the worker sends nothing (hold), so music does not restart.
      // Written while the worker forwards too: the gate's message may reach it a tick later.
      this.#memory.writeOut(tick, this.#source.read(tick));
    }
    this.#worker.ticked(tick, this.#clock.lateMs);
  }
}

/** The worker's error as the class callers test for (SdpError: 488; LegStateError). */
function remoteError(error: unknown): Error {
  if (!(error instanceof Error)) return new Error(String(error));
  if (error.name === "SdpError") return new SdpError(error.message);
  if (error.name === "LegStateError") return new LegStateError(error.message);
  return error;
}
