// A WebRTC media leg in this thread: one werift RTCPeerConnection carrying G.711 audio and RFC 4733
// DTMF to one endpoint; it plays an AudioSource on the frame clock and decodes what it receives
// into a jitter FIFO (or, inside a media worker, into the ring to the main thread's FIFO).

import { EventEmitter } from "node:events";
import type { MediaStreamTrack, RTCPeerConnection, RtpPacket, RTCRtpTransceiver } from "werift";
import { randomUuid, systemClock, systemRandom, type Cancel, type Clock, type RandomSource } from "../clock.js";
import { FRAME_MS, FRAME_SAMPLES, silence, silentFrame, type AudioSource } from "./audio-frame.js";
import { guardHelloVerify } from "./dtls-guard.js";
import { DirectRtpPath, type ConsentOptions, type RtpFields, type RtpOutFields } from "./direct-rtp.js";
import { DtmfDetector, DtmfSender, type DtmfSendOptions } from "./dtmf.js";
import { performanceTime, type TickSource } from "./frame-clock.js";
import type { FrameFifoOptions } from "./frame-fifo.js";
import { decodeG711, encodeG711, G711_PAYLOAD_TYPE, type G711Codec } from "./g711.js";
import { LegStateError, type LegCounters, type LegDirection, type LegEvents, type LegStats, type WebRtcLeg } from "./leg-api.js";
import { LegStateMachine, type LegState } from "./leg-state.js";
import { werift } from "./werift.js";
import { PathChoice, type PathChoiceOptions } from "./path-choice.js";
import { ReceiveBuffer, type ReceivedAudioSink } from "./receive-buffer.js";
import { filterCandidates, isLoopbackAddress, restrictToG711, telephoneEventPayloadType } from "./sdp.js";

export interface WebRtcLegOptions {
  /** The shared 20 ms clock the leg sends on (in a media worker, the main thread's relayed). */
  clock: TickSource;
  id?: string;
  /** Stamps state changes. */
  wallClock?: Clock;
  /** Initial RTP sequence number and timestamp (RFC 3550 wants them random). */
  random?: RandomSource;
  /**
   * The one address the leg binds and advertises (default 127.0.0.1). On loopback, remote
   * candidates on other addresses are dropped too: they could never be reached from here.
   */
  host?: string;
  /** Offer and accept these G.711 variants, in preference order (default PCMU, PCMA). */
  codecs?: readonly G711Codec[];
  /** Payload type offered for telephone-event/8000 (default 101). */
  telephoneEventPayloadType?: number;
  fifo?: FrameFifoOptions;
  /** Close with reason "connect timeout" when ICE/DTLS are not up this long after the remote SDP. */
  connectTimeoutMs?: number;
  /**
   * Audio for a tick the clock delivers later than this after its due time (catching up after
   * a stall) is not sent (default 60 ms, three frames). Sent in a burst, such frames read to
   * the far end's jitter buffer as network delay: Chromium's raised its target by the whole
   * stall and kept it there for seconds, so every later word arrived that much later.
   */
  maxSendLatenessMs?: number;
  /**
   * A packet to forward on arrival (forward.ts) that comes more than this later than the stream's
   * earliest, relative to their RTP timestamps, is not forwarded (default 60 ms, the tick path's
   * bound, or none when maxSendLatenessMs is Infinity; never more than maxSendLatenessMs).
   * Forwarded packets are not re-timed: the lateness they carry is what the far end's jitter buffer
   * learns. A tighter bound (20 ms) was measured against 60 ms in session 20 and gained nothing
   * consistent while dropping 4-14% of packets under load (docs/design-notes.md, session 20).
   */
  maxForwardLatenessMs?: number;
  /** What the forward path reads a packet's arrival on (default performance.now(); tests move it by hand). */
  time?: { now(): number };
  /**
   * Forwarded to this leg (forward.ts), the direction's path is chosen from its lateness
   * (path-choice.ts): packets sent on arrival while they come on time, put through a receive buffer
   * of this leg's own and sent on its ticks (the mixer path's timing) while this thread's lateness
   * runs high. True takes the default thresholds. Off (default): always on arrival.
   */
  choosePath?: boolean | PathChoiceOptions;
  /**
   * Where decoded audio goes instead of this leg's own jitter FIFO (a media worker's ring to the
   * main thread); `incoming` is then silent here.
   */
  received?: ReceivedAudioSink;
  /**
   * ICE consent freshness once the direct path is open (direct-rtp.ts): ours by default, on real
   * monotonic time (not `wallClock`: consent is the network's time, as werift's was), its
   * transaction ids and jitter from the system's random source (not `random`: drawn at moments the
   * network sets, they would make a seeded source's sequence depend on timing).
   */
  consent?: ConsentOptions;
}

/** Largest forward jump in sequence numbers still read as loss; beyond it the sender restarted. */
const MAX_SEQUENCE_GAP = 100;
/** Silent frames put in for lost packets, at most: enough to keep timing, never a long delay. */
const MAX_CONCEALED_FRAMES = 3;
const DEFAULT_MAX_SEND_LATENESS_MS = 3 * FRAME_MS;
const DEFAULT_MAX_FORWARD_LATENESS_MS = 3 * FRAME_MS;

/** Where a leg forwarding on arrival (forward.ts) sends each audio packet it receives. */
export interface ForwardTarget {
  /** An audio packet (G.711 payload type 0 or 8) as it arrived, with its RTP timestamp; copy what is kept. */
  forwarded(payload: Buffer, payloadType: number, timestamp: number): void;
}

/** Which path sent a leg's last audio or DTMF packet: its timestamps are mapped when that changes. */
const TICK_PATH = 0;
const FORWARD_PATH = 1;
/** Samples per ms at G.711's 8 kHz. */
const SAMPLES_PER_MS = FRAME_SAMPLES / FRAME_MS;
/** Late forwarded packets in a row after which their lateness is taken as the path's new delay. */
const MAX_LATE_RUN = 10;
/**
 * How far the forward path's floor (the earliest arrival against the timestamps) creeps up per
 * packet, in samples: 2 of a 160-sample packet, so a far end whose clock runs up to 1.25% slow
 * (Chromium's audio under load) is followed rather than read as ever later packets; an earlier
 * packet sets it back down.
 */
const FLOOR_DRIFT = 2;

/** A leg's ICE settings: no STUN, no interface scan, one host candidate on one socket bound to `host`. */
export function hostOnlyIce(host: string) {
  return {
    iceServers: [],
    iceUseIpv4: false,
    iceUseIpv6: false,
    iceAdditionalHostAddresses: [host],
    iceInterfaceAddresses: { [host.includes(":") ? "udp6" : "udp4"]: host },
  };
}

/** Whether a transceiver direction sends (a function here, not a closure made per tick). */
const sends = (d: string | null | undefined): boolean => d === "sendrecv" || d === "sendonly";

export class PeerLeg extends EventEmitter<LegEvents> implements WebRtcLeg {
  readonly id: string;
  /** What the far end says, one frame per tick (silence when nothing arrived): a mixer input. */
  readonly incoming: AudioSource;
  readonly #clock: TickSource;
  readonly #pc: RTCPeerConnection;
  readonly #state: LegStateMachine;
  readonly #host: string;
  /** This leg's own jitter FIFO, unless its audio goes elsewhere (options.received). */
  readonly #buffer: ReceiveBuffer | undefined;
  readonly #received: ReceivedAudioSink;
  #decoded = new Int16Array(FRAME_SAMPLES);
  readonly #dtmfIn = new DtmfDetector();
  readonly #dtmfOut = new DtmfSender();
  readonly #connectTimeoutMs: number;
  readonly #maxSendLatenessMs: number;
  readonly #maxForwardLatenessMs: number;
  readonly #time: { now(): number };
  readonly #stats: LegCounters = {
    packetsSent: 0,
    packetsReceived: 0,
    packetsLost: 0,
    packetsDiscarded: 0,
    dtmfPacketsSent: 0,
    staleFramesSkipped: 0,
    sendErrors: 0,
    forwardLateOver10Ms: 0,
    forwardLateOver20Ms: 0,
    forwardLateOver40Ms: 0,
    forwardLateOver60Ms: 0,
    forwardSteps: 0,
    forwardToTicks: 0,
    ticksToForward: 0,
  };
  #transceiver: RTCRtpTransceiver | undefined;
  #codecSeen: RTCRtpTransceiver["sender"]["codec"];
  #codecName: G711Codec | undefined;
  /** RTP straight to and from the socket once connected (direct-rtp.ts); werift's path until then. */
  #direct: DirectRtpPath | undefined;
  #source: AudioSource = silence;
  #unsubscribeTick: (() => void) | undefined;
  #cancelConnectTimeout: Cancel | undefined;
  readonly #wallClock: Clock;
  readonly #consent: ConsentOptions;
  #closing: Promise<void> | undefined;
  #closeReason: string | undefined;
  // Sending.
  #sequence: number;
  readonly #timestampBase: number;
  #marker = true;
  // A tick's encoded frame and its header, reused: the direct path copies both into the packet
  // before send() returns, and werift's path gets copies (#send).
  readonly #payload = Buffer.alloc(FRAME_SAMPLES);
  readonly #header: RtpOutFields = { payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, marker: false };
  #dtmfTimestamp = 0;
  #remoteTelephoneEvent: number | undefined;
  // Forwarding on arrival (forward.ts): where received audio goes at once, and the source whose
  // playing lets forwarded packets out (the bridge's mix for this leg; anything else played, such
  // as hold music, takes the tick path back at once).
  #forwardTo: ForwardTarget | undefined;
  #forwardWhile: AudioSource | undefined;
  /**
   * Whether received audio is decoded into the receive buffer (or the worker's ring). Off only while
   * the leg forwards and nothing reads its decoded audio (a forwarding bridge with no recorder):
   * its ticks then read neither its receive buffer nor its source (the bridge's mix).
   */
  #decoding = true;
  readonly #forwardPayload = Buffer.alloc(FRAME_SAMPLES);
  #forwardDecoded = new Int16Array(FRAME_SAMPLES);
  /**
   * The two paths share one outgoing timeline: each path's timestamps are shifted so that its first
   * packet after the other path's last follows it by one frame (no jump the far end hears as a gap).
   */
  #lastPath = TICK_PATH;
  /**
   * The forward path's lateness: each packet's arrival (ms, as samples) less its RTP timestamp, the
   * earliest such offset seen (drifting up slowly), and how many packets in a row came late.
   */
  #forwardFloor: number | undefined;
  /** The floor the outgoing timeline was last set against: the floor risen a frame above it, it steps. */
  #stepBase = 0;
  #lateRun = 0;
  #lastTimestamp: number | undefined;
  #tickShift = 0;
  #forwardShift = 0;
  /**
   * The path choice of the direction forwarded to this leg (options.choosePath), and while its
   * ticks carry that direction, the receive buffer they play (decoded forwarded packets).
   */
  readonly #choice: PathChoice | undefined;
  #relay: ReceiveBuffer | undefined;
  #relaying = false;
  #relayDecoded = new Int16Array(FRAME_SAMPLES);
  // Receiving.
  readonly #tracks = new WeakSet<MediaStreamTrack>();
  #receiveTypes = new Set<number>();
  #expectedSequence: number | undefined;
  #remoteSsrc: number | undefined;

  constructor(options: WebRtcLegOptions) {
    super();
    const random = options.random ?? systemRandom;
    this.id = options.id ?? randomUuid(random);
    this.#clock = options.clock;
    this.#host = options.host ?? "127.0.0.1";
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 15_000;
    this.#maxSendLatenessMs = options.maxSendLatenessMs ?? DEFAULT_MAX_SEND_LATENESS_MS;
    // No bound on the tick path (far ends in this process: tests) is none on the forward path either.
    const forwardDefault = this.#maxSendLatenessMs === Infinity ? Infinity : DEFAULT_MAX_FORWARD_LATENESS_MS;
    this.#maxForwardLatenessMs = Math.min(this.#maxSendLatenessMs, options.maxForwardLatenessMs ?? forwardDefault);
    this.#time = options.time ?? performanceTime;
    const choosePath = options.choosePath ?? false;
    this.#choice = choosePath === false ? undefined : new PathChoice(choosePath === true ? {} : choosePath);
    this.#buffer = options.received ? undefined : new ReceiveBuffer(options.fifo);
    this.#received = options.received ?? (this.#buffer as ReceiveBuffer);
    this.#wallClock = options.wallClock ?? systemClock;
    this.#consent = options.consent ?? {};
    this.#state = new LegStateMachine(this.#wallClock, (change) => this.emit("state", change));
    const seed = random.bytes(6);
    this.#sequence = seed.readUInt16BE(0);
    this.#timestampBase = seed.readUInt32BE(2);

    const { RTCPeerConnection, RTCRtpCodecParameters } = werift();
    const codecs = (options.codecs ?? ["PCMU", "PCMA"]).map(
      (name) => new RTCRtpCodecParameters({ mimeType: `audio/${name}`, clockRate: 8000, channels: 1, payloadType: G711_PAYLOAD_TYPE[name] }),
    );
    const telephoneEvent = new RTCRtpCodecParameters({
      mimeType: "audio/telephone-event",
      clockRate: 8000,
      channels: 1,
      payloadType: options.telephoneEventPayloadType ?? 101,
      parameters: "0-16",
    });
    this.#pc = new RTCPeerConnection({ codecs: { audio: [...codecs, telephoneEvent], video: [] }, ...hostOnlyIce(this.#host) });
    // Hooked before any remote description is applied: a track announced by
    // setRemoteDescription is missed by a listener added after it (field notes, pitfall 5).
    this.#pc.onTrack.subscribe((track) => this.#listen(track));
    this.#pc.connectionStateChange.subscribe((state) => {
      if (state === "connected") this.#connected();
      // ICE up but the connection failed: the DTLS handshake did (a timeout, a bad record).
      else if (state === "failed") void this.close(["connected", "completed"].includes(this.#pc.iceConnectionState) ? "dtls failed" : "ice failed");
      else if (state === "closed") void this.close("transport closed");
    });

    const machine = this.#state;
    const buffer = this.#buffer;
    this.incoming = {
      read: buffer ? (tick) => buffer.frameFor(tick) : () => silentFrame(),
      get ended() {
        return machine.state === "closed";
      },
    };
  }

  get state(): LegState {
    return this.#state.state;
  }

  /** Why the leg closed ("hangup", "ice failed", "connect timeout" ...), once closed. */
  get closeReason(): string | undefined {
    return this.#closeReason;
  }

  /** The G.711 variant this leg sends, once negotiated. */
  get codec(): G711Codec | undefined {
    // Read every tick to encode: the name is worked out again only when werift's codec changes.
    const codec = this.#transceiver?.sender.codec;
    if (codec !== this.#codecSeen) {
      this.#codecSeen = codec;
      const mime = codec?.mimeType.toUpperCase();
      this.#codecName = mime === "AUDIO/PCMU" ? "PCMU" : mime === "AUDIO/PCMA" ? "PCMA" : undefined;
    }
    return this.#codecName;
  }

  /** The negotiated direction from this side ("sendonly" while this leg holds the far end). */
  get direction(): LegDirection | undefined {
    return this.#transceiver?.currentDirection ?? undefined;
  }

  stats(): LegStats {
    const buffer = this.#buffer;
    const fifo = buffer ? { ...buffer.stats } : { pushed: 0, played: 0, dropped: 0, overflowed: 0, skipped: 0, compressed: 0, underruns: 0 };
    return { ...this.#stats, fifo, jitterBufferMs: buffer?.jitterBufferMs ?? 0 };
  }

  /** The RTP counters themselves (live, not a copy): a media worker copies them to shared memory. */
  get counters(): Readonly<LegCounters> {
    return this.#stats;
  }

  /** Plays `source` to the far end from the next tick on (silence when given nothing). */
  play(source: AudioSource = silence): void {
    this.#source = source;
  }

  get source(): AudioSource {
    return this.#source;
  }

  /**
   * An SDP offer: the first one starts negotiation, later ones re-negotiate a connected leg
   * (a re-INVITE). Candidates are gathered before it returns, so it needs no trickle.
   */
  async createOffer(): Promise<string> {
    this.#assertOpen("createOffer");
    if (this.state === "new") {
      this.#state.transition("negotiating");
      this.#transceiver = this.#pc.addTransceiver("audio", { direction: "sendrecv" });
    }
    const offer = await this.#pc.createOffer();
    await this.#pc.setLocalDescription(offer);
    return this.#localSdp();
  }

  /** Applies the far end's answer to this leg's offer. */
  async acceptAnswer(sdp: string): Promise<void> {
    this.#assertOpen("acceptAnswer");
    if (this.state === "new") throw new LegStateError("acceptAnswer before createOffer");
    await this.#pc.setRemoteDescription({ type: "answer", sdp: this.#cleanRemote(sdp, false) });
    this.#negotiated();
  }

  /**
   * Answers an offer: the first starts negotiation, a later one (the far end holding, resuming,
   * re-INVITE) re-negotiates. Throws SdpError when the offer has no G.711.
   */
  async acceptOffer(sdp: string): Promise<string> {
    this.#assertOpen("acceptOffer");
    const cleaned = this.#cleanRemote(sdp, true);
    const first = this.state === "new";
    if (first) this.#state.transition("negotiating");
    await this.#pc.setRemoteDescription({ type: "offer", sdp: cleaned });
    if (first) {
      this.#transceiver = this.#pc.getTransceivers().find((t) => t.kind === "audio");
      // werift answers an offer with recvonly unless told this side sends too.
      this.#transceiver?.setDirection("sendrecv");
    }
    const answer = await this.#pc.createAnswer();
    await this.#pc.setLocalDescription(answer);
    this.#negotiated();
    return this.#localSdp();
  }

  /**
   * Puts the far end on hold: this side keeps sending (hold music) but asks for nothing back
   * ("sendonly"), or goes silent both ways ("inactive"). Returns the re-offer; feed the answer
   * to acceptAnswer.
   */
  async hold(mode: "sendonly" | "inactive" = "sendonly"): Promise<string> {
    this.#assertConnected("hold");
    this.#transceiver?.setDirection(mode);
    return this.createOffer();
  }

  /** Takes the far end off hold; returns the re-offer. */
  async unhold(): Promise<string> {
    this.#assertConnected("unhold");
    this.#transceiver?.setDirection("sendrecv");
    return this.createOffer();
  }

  /** Sends digits (0-9 * # A-D) as RFC 4733 events; resolves when the last one is out. */
  async sendDtmf(digits: string, options?: DtmfSendOptions): Promise<void> {
    this.#assertOpen("sendDtmf");
    await this.#dtmfOut.enqueue(digits, options);
  }

  /** Ends the leg: stops sending, releases the sockets, reports `closed` once. */
  close(reason = "hangup"): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: string): Promise<void> {
    this.#closeReason = reason;
    if (this.state !== "closed") this.#state.transition("closed", reason);
    this.#unsubscribeTick?.();
    this.#unsubscribeTick = undefined;
    this.#cancelConnectTimeout?.();
    this.#dtmfOut.cancel();
    // The connection closes next: werift's consent loop need not start again.
    this.#direct?.close(true);
    this.#direct = undefined;
    this.#buffer?.clear();
    await this.#pc.close();
  }

  #assertOpen(action: string): void {
    if (this.state === "closed") throw new LegStateError(`${action} on a closed leg`);
  }

  #assertConnected(action: string): void {
    if (this.state !== "connected") throw new LegStateError(`${action} needs a connected leg (it is ${this.state})`);
  }

  #cleanRemote(sdp: string, isOffer: boolean): string {
    let cleaned = isOffer ? restrictToG711(sdp) : sdp;
    if (isLoopbackAddress(this.#host)) cleaned = filterCandidates(cleaned, isLoopbackAddress);
    this.#remoteTelephoneEvent = telephoneEventPayloadType(cleaned) ?? this.#remoteTelephoneEvent;
    return cleaned;
  }

  #localSdp(): string {
    const sdp = this.#pc.localDescription?.sdp;
    if (sdp === undefined) throw new LegStateError("werift produced no local description");
    return sdp;
  }

  /** After each offer/answer exchange: learn the payload types to expect, watch the connect. */
  #negotiated(): void {
    const local = this.#pc.localDescription?.sdp ?? "";
    const remote = this.#pc.remoteDescription?.sdp ?? "";
    this.#receiveTypes = new Set([telephoneEventPayloadType(local), telephoneEventPayloadType(remote)].filter((pt) => pt !== undefined));
    for (const transport of this.#pc.dtlsTransports) guardHelloVerify(transport);
    if (this.state === "negotiating" && this.#cancelConnectTimeout === undefined) {
      this.#cancelConnectTimeout = this.#wallClock.after(this.#connectTimeoutMs, () => void this.close("connect timeout"));
    }
    if (this.state === "negotiating" && this.#pc.connectionState === "connected") this.#connected();
  }

  #connected(): void {
    if (this.state !== "negotiating") return;
    this.#cancelConnectTimeout?.();
    this.#state.transition("connected");
    this.#openDirectPath();
    this.#unsubscribeTick = this.#clock.subscribe((tick) => this.#tick(tick));
  }

  /** Takes RTP off werift's layers, or follows ICE to a new pair after a restart. */
  #openDirectPath(): void {
    if (this.#direct?.current) return;
    this.#direct?.close();
    const dtls = this.#transceiver?.dtlsTransport;
    this.#direct = dtls
      ? DirectRtpPath.open(dtls, {
          packet: (fields, payload) => this.#receive(fields, payload),
          bad: () => this.#stats.packetsDiscarded++,
          sendFailed: () => this.#stats.sendErrors++,
        }, this.#consent)
      : undefined;
  }

  /** Sends through the direct path when there is one, else through werift's DTLS transport. */
  #send(transceiver: RTCRtpTransceiver, payload: Buffer, header: RtpOutFields): void {
    const direct = this.#direct;
    if (direct?.current) {
      if (!direct.send(payload, header)) this.#stats.sendErrors++;
      return;
    }
    if (this.state === "connected") this.#openDirectPath();
    // Sent later (a promise): copies, so the leg's reused payload and header stay its own.
    transceiver.dtlsTransport.sendRtp(Buffer.from(payload), new (werift().RtpHeader)({ ...header })).catch(() => this.#stats.sendErrors++);
  }

  #canSend(): boolean {
    const t = this.#transceiver;
    if (!t) return false;
    // The wanted direction stops sending at once when this side holds; the negotiated one
    // starts it again only once the far end has agreed.
    return sends(t.direction) && sends(t.currentDirection);
  }

  // Packets go straight to the DTLS transport (SRTP, then UDP), past werift's RTCRtpSender: the
  // sender rewrites every payload type to the audio codec's (breaking RFC 4733 events), and its
  // per-packet bookkeeping for video (bandwidth estimation, NACK history, NTP stamps, header
  // extensions) cost more CPU than the audio itself. Sequence numbers, timestamps and the SSRC
  // are this leg's own; what is lost is werift's RTCP sender reports, which G.711 does not need.
  #tick(tick: number): void {
    const forwarding = this.#forwarding();
    // Forwarding with nothing that needs the decoded audio: no mix to read, no buffer to drain.
    const idle = forwarding && !this.#decoding;
    // The receive FIFO drains at the clock's pace even when no bridge reads it, so a bridge
    // joining later does not start with a backlog of stale audio.
    if (!idle) this.#buffer?.frameFor(tick);
    // The source advances even while nothing is sent, so hold music does not restart.
    let frame = idle ? silentFrame() : this.#source.read(tick);
    // The direction forwarded to this leg on the ticks (path-choice.ts): its receive buffer's frame.
    const relayed = forwarding && this.#relaying;
    if (forwarding) this.#choice?.tick(this.#clock.lateMs);
    else if (this.#relaying) this.#stopRelay();
    // Until it has played since the switch, and whenever it runs dry, the tick sends nothing: a
    // timestamp gap with no sequence gap, a pause of a frame to the far end (as for a late tick's
    // frame). To a receiver that plays by timestamps that is what a silent frame would be; one
    // that plays packets in order gets no frame of silence to keep as delay.
    let relayPlays = false;
    if (relayed) {
      const relay = this.#relay as ReceiveBuffer;
      frame = relay.frameFor(tick);
      relayPlays = relay.playing;
    }
    const transceiver = this.#transceiver;
    if (!transceiver || !this.#canSend()) {
      this.#marker = true;
      return;
    }
    const dtmf = this.#dtmfOut.next();
    // Forwarded packets carry this leg's audio: the tick sends only DTMF (which takes their place),
    // or the relayed frame its buffer played.
    if (forwarding && (dtmf === undefined || dtmf === "gap") && !relayPlays) return;
    const timestamp = this.#tickTimestamp(tick);
    if (dtmf !== undefined && dtmf !== "gap") {
      const payloadType = this.#remoteTelephoneEvent;
      if (payloadType === undefined) return;
      if (dtmf.start) this.#dtmfTimestamp = timestamp;
      const header: RtpOutFields = {
        payloadType,
        sequenceNumber: this.#nextSequence(),
        timestamp: this.#dtmfTimestamp,
        ssrc: transceiver.sender.ssrc,
        marker: dtmf.start,
      };
      this.#stats.dtmfPacketsSent++;
      this.#send(transceiver, dtmf.payload, header);
      return;
    }
    const codec = this.codec;
    if (!codec) return;
    // Too late to be worth hearing: the far end has already concealed this frame's time, and
    // sending it now would only teach its jitter buffer to wait longer for every frame after
    // it. Not sending leaves a timestamp gap with no sequence gap, which receivers play as a
    // pause, as after a clock skip or a DTMF event.
    if (this.#clock.lateMs > this.#maxSendLatenessMs) {
      this.#stats.staleFramesSkipped++;
      return;
    }
    this.#sendFrame(transceiver, codec, frame, timestamp);
  }

  /** One frame of audio encoded and sent as the next packet of this leg's stream, at `timestamp`. */
  #sendFrame(transceiver: RTCRtpTransceiver, codec: G711Codec, frame: Int16Array, timestamp: number): void {
    const payload = this.#payload;
    encodeG711(codec, frame, payload);
    const header = this.#header;
    header.payloadType = G711_PAYLOAD_TYPE[codec];
    header.sequenceNumber = this.#nextSequence();
    header.timestamp = timestamp;
    header.ssrc = transceiver.sender.ssrc;
    header.marker = this.#marker;
    this.#marker = false;
    this.#stats.packetsSent++;
    this.#send(transceiver, payload, header);
  }

  /** The tick path's timestamp for `tick`, following on from the forward path's last packet. */
  #tickTimestamp(tick: number): number {
    const own = (this.#timestampBase + tick * FRAME_SAMPLES) >>> 0;
    if (this.#lastPath === FORWARD_PATH && this.#lastTimestamp !== undefined) {
      this.#tickShift = (this.#lastTimestamp + FRAME_SAMPLES - own) >>> 0;
      this.#lastPath = TICK_PATH;
    }
    const timestamp = (own + this.#tickShift) >>> 0;
    this.#lastTimestamp = timestamp;
    return timestamp;
  }

  /**
   * Forwards each audio packet this leg receives to `target` at once, as well as into its receive
   * buffer (the mixer and the recorder still read that); undefined stops it.
   */
  forwardTo(target: ForwardTarget | undefined): void {
    this.#forwardTo = target;
  }

  /**
   * Sends packets forwarded to this leg (and no audio of its own ticks) while it plays `source`
   * (the bridge's mix for it); undefined: the tick path only.
   */
  forwardWhile(source: AudioSource | undefined): void {
    this.#forwardWhile = source;
  }

  /**
   * Decodes received audio into the receive buffer (on, the default) or not (off: only while the
   * leg forwards and nothing needs its decoded audio; DTMF, the counters and forwarding go on).
   * Turned off, the buffer is emptied; turned on, it fills again from the next packet.
   */
  decode(on: boolean): void {
    if (on === this.#decoding) return;
    this.#decoding = on;
    if (!on) this.#buffer?.clear();
  }

  /** Whether this leg's receive buffer played received audio at the last tick (false in a media worker). */
  get primed(): boolean {
    return this.#buffer?.playing ?? false;
  }

  #forwarding(): boolean {
    return this.#forwardWhile !== undefined && this.#forwardWhile === this.#source;
  }

  /** A packet another leg received, sent on at once with this leg's SSRC, sequence and timeline. */
  forwarded(payload: Buffer, payloadType: number, timestamp: number): void {
    if (!this.#forwarding() || this.state !== "connected" || this.#dtmfOut.busy) return;
    const transceiver = this.#transceiver;
    if (!transceiver || !this.#canSend()) {
      this.#marker = true;
      return;
    }
    const codec = this.codec;
    const from: G711Codec | undefined = payloadType === 0 ? "PCMU" : payloadType === 8 ? "PCMA" : undefined;
    if (!codec || !from || payload.length > FRAME_SAMPLES * 4) return;
    // The direction's path (options.choosePath): on the ticks while its lateness runs high.
    const choice = this.#choice;
    if (choice) {
      choice.arrival(this.#time.now(), timestamp);
      if (choice.ticks) {
        this.#relayPacket(from, payload, timestamp);
        return;
      }
      if (this.#relaying) this.#endRelay(transceiver, codec);
    }
    let out = payload;
    if (from !== codec) {
      // Transcoded per packet, through linear samples (the G.711 tables).
      if (this.#forwardDecoded.length !== payload.length) this.#forwardDecoded = new Int16Array(payload.length);
      out = payload.length === FRAME_SAMPLES ? this.#forwardPayload : Buffer.alloc(payload.length);
      encodeG711(codec, decodeG711(from, payload, this.#forwardDecoded), out);
    }
    if (this.#lastPath === TICK_PATH) {
      const last = this.#lastTimestamp ?? this.#timestampBase - FRAME_SAMPLES;
      this.#forwardShift = (last + FRAME_SAMPLES - timestamp) >>> 0;
      this.#lastPath = FORWARD_PATH;
      this.#forwardFloor = undefined;
    }
    if (this.#tooLate(timestamp)) {
      // A sequence number used up: the far end sees a lost packet (conceals it, its jitter buffer's
      // packet length stays one frame), not a 40 ms packet after a 20 ms one.
      this.#nextSequence();
      this.#stats.staleFramesSkipped++;
      return;
    }
    const header = this.#header;
    header.payloadType = G711_PAYLOAD_TYPE[codec];
    header.sequenceNumber = this.#nextSequence();
    header.timestamp = (timestamp + this.#forwardShift) >>> 0;
    header.ssrc = transceiver.sender.ssrc;
    header.marker = this.#marker;
    this.#marker = false;
    this.#lastTimestamp = header.timestamp;
    this.#stats.packetsSent++;
    this.#send(transceiver, out, header);
  }

  /**
   * Whether a forwarded packet comes more than maxForwardLatenessMs later than the earliest packet
   * of the stream relative to their timestamps (the far end's send jitter, this thread not woken
   * in time for the socket, a stall, a hop between workers): sent on, a late packet reads to the
   * far end's jitter buffer as network delay, and it waits that much longer for every later packet.
   * Not sending one leaves a gap in both timestamps and sequence numbers: the far end conceals a
   * lost packet (the mixer path's rule, where a late tick's frame is not sent, is the reference;
   * there the sequence runs on, a pause). A run of late packets is a new delay of the path,
   * taken as its floor, the outgoing timeline stepping forward with it (forwardSteps). The lateness
   * is counted (forwardLateOver*Ms) whether or not it is sent.
   */
  #tooLate(timestamp: number): boolean {
    if (this.#maxForwardLatenessMs === Infinity) return false;
    // RTP timestamps wrap at 2^32: the offset is taken modulo 2^32 and read as signed.
    const offset = (Math.round(this.#time.now() * SAMPLES_PER_MS) - timestamp) | 0;
    const floor = this.#forwardFloor;
    const late = floor === undefined ? 0 : (offset - floor) | 0;
    // A first packet, an earlier one, or a jump of seconds (the far end's timeline changed): a new floor.
    if (floor === undefined || late < 0 || late > 2000 * SAMPLES_PER_MS) {
      if (floor === undefined || late >= 0 || ((offset - this.#stepBase) | 0) < 0) this.#stepBase = offset;
      this.#forwardFloor = offset;
      this.#lateRun = 0;
      return false;
    }
    // Kept in 32 bits, as the offsets are: they wrap with the RTP timestamps.
    this.#forwardFloor = (floor + FLOOR_DRIFT) | 0;
    // The floor crept a frame above the timeline's base (the far end's clock runs slow): the
    // outgoing timeline steps a frame, a sequence number used up (a lost packet to the far end,
    // as the mixer path's receive buffer running dry puts a silent frame in), not a delay.
    if (((this.#forwardFloor - this.#stepBase) | 0) >= FRAME_SAMPLES) this.#step(1);
    const stats = this.#stats;
    if (late > 10 * SAMPLES_PER_MS) {
      stats.forwardLateOver10Ms++;
      if (late > 20 * SAMPLES_PER_MS) stats.forwardLateOver20Ms++;
      if (late > 40 * SAMPLES_PER_MS) stats.forwardLateOver40Ms++;
      if (late > 60 * SAMPLES_PER_MS) stats.forwardLateOver60Ms++;
    }
    if (late <= this.#maxForwardLatenessMs * SAMPLES_PER_MS) {
      this.#lateRun = 0;
      return false;
    }
    if (++this.#lateRun < MAX_LATE_RUN) return true;
    // The path's delay stepped up (the far end's clock fell behind, this thread's wake-ups came
    // later): a new floor, and this leg's outgoing timeline steps forward by as many whole frames,
    // with as many sequence numbers used up, so the far end sees lost packets, not a delay its
    // jitter buffer would keep for seconds (the mixer path's receive buffer takes such a step and
    // its tick path's timeline never shows it).
    this.#forwardFloor = offset;
    this.#lateRun = 0;
    this.#step(Math.round(late / FRAME_SAMPLES));
    this.#stepBase = offset;
    return false;
  }

  /**
   * A forwarded packet for the ticks to send (the direction's path chose them): decoded into the
   * relay buffer. The first since arrival had the direction starts the relay.
   */
  #relayPacket(from: G711Codec, payload: Buffer, timestamp: number): void {
    if (!this.#relaying) {
      this.#relaying = true;
      // Read only while it carries the direction: ticks between are no skipped ticks to it.
      this.#relay ??= new ReceiveBuffer();
      this.#relay.restart();
      this.#stats.forwardToTicks++;
    }
    if (this.#relayDecoded.length !== payload.length) this.#relayDecoded = new Int16Array(payload.length);
    (this.#relay as ReceiveBuffer).accept(decodeG711(from, payload, this.#relayDecoded), timestamp);
  }

  /**
   * Arrival takes the direction back: the frames the relay buffer still holds (received, not yet
   * sent) go now, on the tick path's timeline, so none is lost and the packet forwarded next
   * follows the last of them.
   */
  #endRelay(transceiver: RTCRtpTransceiver, codec: G711Codec): void {
    const relay = this.#relay as ReceiveBuffer;
    this.#relaying = false;
    this.#stats.ticksToForward++;
    relay.drain((frame) => {
      const timestamp = ((this.#lastTimestamp ?? this.#timestampBase - FRAME_SAMPLES) + FRAME_SAMPLES) >>> 0;
      this.#lastTimestamp = timestamp;
      this.#lastPath = TICK_PATH;
      this.#sendFrame(transceiver, codec, frame, timestamp);
    });
    relay.clear();
  }

  /** The ticks stop carrying the forwarded direction (what the relay buffer holds is dropped unless drained first). */
  #stopRelay(): void {
    this.#relaying = false;
    if (this.#relay && this.#relay.depth > 0) this.#relay.clear();
  }

  /** Steps the forward path's outgoing timeline `frames` frames on, as many sequence numbers used up. */
  #step(frames: number): void {
    this.#forwardShift = (this.#forwardShift + frames * FRAME_SAMPLES) >>> 0;
    this.#sequence = (this.#sequence + frames) & 0xffff;
    this.#stepBase = (this.#stepBase + frames * FRAME_SAMPLES) | 0;
    this.#stats.forwardSteps++;
  }

  #nextSequence(): number {
    const sequence = this.#sequence;
    this.#sequence = (sequence + 1) & 0xffff;
    return sequence;
  }

  #listen(track: MediaStreamTrack): void {
    // werift announces the same track again after each re-negotiation.
    if (this.#tracks.has(track)) return;
    this.#tracks.add(track);
    track.onReceiveRtp.subscribe((packet: RtpPacket) => this.#receive(packet.header, packet.payload));
  }

  #receive({ payloadType, sequenceNumber, timestamp, ssrc }: RtpFields, payload: Buffer): void {
    if (this.state === "closed") return;
    if (!this.#inSequence(ssrc, sequenceNumber)) return;
    if (this.#receiveTypes.has(payloadType)) {
      const digit = this.#dtmfIn.accept(timestamp, payload);
      if (digit) this.emit("dtmf", digit);
      return;
    }
    const codec: G711Codec | undefined = payloadType === 0 ? "PCMU" : payloadType === 8 ? "PCMA" : undefined;
    if (!codec) return;
    this.#stats.packetsReceived++;
    if (this.#decoding) {
      // Into the leg's scratch buffer: a sink copies what it keeps (a worker's ring, a FIFO).
      if (this.#decoded.length !== payload.length) this.#decoded = new Int16Array(payload.length);
      this.#received.accept(decodeG711(codec, payload, this.#decoded), timestamp);
    }
    this.#forwardTo?.forwarded(payload, payloadType, timestamp);
  }

  /** Counts lost packets, fills their time with silence; false for a late or repeated packet. */
  #inSequence(ssrc: number, sequence: number): boolean {
    if (ssrc !== this.#remoteSsrc || this.#expectedSequence === undefined) {
      this.#remoteSsrc = ssrc;
      this.#expectedSequence = (sequence + 1) & 0xffff;
      return true;
    }
    const ahead = (sequence - this.#expectedSequence) & 0xffff;
    if (ahead >= 0x8000) {
      this.#stats.packetsDiscarded++;
      return false;
    }
    if (ahead > 0 && ahead <= MAX_SEQUENCE_GAP) {
      this.#stats.packetsLost += ahead;
      if (this.#decoding) this.#received.conceal(Math.min(ahead, MAX_CONCEALED_FRAMES));
    }
    this.#expectedSequence = (sequence + 1) & 0xffff;
    return true;
  }
}
