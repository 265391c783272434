// The console's softphone: one sip.js user agent registered as the agent's device over the
// server's /sip WebSocket, with its calls (place, answer, reject, hold, mute, DTMF, hang up) and
// their audio, and, when asked, reconnecting and registering again by itself after a drop.
import {
  Invitation,
  Inviter,
  Registerer,
  RegistererState,
  SessionState,
  UserAgent,
  Web,
  type Session,
} from "sip.js";
import { errorMessage } from "../api/error-text.js";
import { backoffDelay, type Clock } from "../clock.js";
import type { CallInfo, CallState, OfferDetails, PhoneLine, RegistrationState } from "./phone-line.js";

export type { CallInfo, CallState, OfferDetails, RegistrationState } from "./phone-line.js";

export interface SoftphoneOptions {
  /** ws://host:port/sip */
  server: string;
  /** The device's SIP username and password, and the account realm. */
  username: string;
  password: string;
  realm: string;
  displayName?: string;
  /** Seconds a registration lasts before it is refreshed. */
  expires?: number;
  /** Microphone constraints; tests turn the processing off to measure levels. A chosen microphone is `{deviceId}`. */
  audio?: MediaTrackConstraints | boolean;
  /** Play the far end's audio muted (tests that read it through WebAudio). Default false. */
  muteRemoteAudio?: boolean;
  /** The output device for the far end's audio (setSinkId); the system default when absent. */
  speakerId?: string;
  /** When the WebSocket drops or registering fails on the way, try again with back-off on this clock. */
  reconnect?: { clock: Clock; random?: () => number };
}

/** How long one registration attempt may take when reconnecting by itself. */
const REGISTER_DEADLINE_MS = 8000;

/** The INVITE headers a queue's offer carries; absent on a direct call. */
export const OFFER_HEADERS = { queueId: "X-Queue-ID", queueName: "X-Queue-Name", waited: "X-Queue-Wait-Seconds", callbackNumber: "X-Callback-Number" } as const;

export function offerDetails(header: (name: string) => string | undefined): OfferDetails {
  const out: OfferDetails = {};
  const queueId = header(OFFER_HEADERS.queueId)?.trim();
  const queueName = header(OFFER_HEADERS.queueName)?.trim();
  const waited = Number(header(OFFER_HEADERS.waited)?.trim() ?? "");
  if (queueId) out.queueId = queueId;
  if (queueName) out.queueName = decodeHeaderText(queueName);
  if (Number.isFinite(waited) && waited >= 0 && header(OFFER_HEADERS.waited) !== undefined) out.waitedS = Math.floor(waited);
  const callbackNumber = header(OFFER_HEADERS.callbackNumber)?.trim();
  if (callbackNumber) out.callbackNumber = callbackNumber;
  return out;
}

/** Header values are ASCII; a name with other characters arrives percent-encoded. */
function decodeHeaderText(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

export interface CallStats {
  packetsReceived: number;
  packetsSent: number;
  packetsLost: number;
  /** 0..1, the received audio's level. */
  audioLevel: number;
  /** 0..1, the microphone's level as sent. */
  localLevel: number;
  jitterMs: number;
}

type Listener<T> = (value: T) => void;

/** The SDP handler options every session uses: no public STUN, quick ICE on the local server. */
function handlerOptions(audio: MediaTrackConstraints | boolean) {
  return { constraints: { audio, video: false } };
}

export class Softphone implements PhoneLine {
  readonly #ua: UserAgent;
  readonly #registerer: Registerer;
  readonly #options: SoftphoneOptions;
  readonly #calls = new Map<string, { session: Session; info: CallInfo; player?: HTMLAudioElement }>();
  readonly #callListeners = new Set<Listener<CallInfo>>();
  readonly #registrationListeners = new Set<Listener<RegistrationState>>();
  readonly #dtmfListeners = new Set<Listener<string>>();
  #registration: RegistrationState = "unregistered";
  #speakerId: string | undefined;
  /** Registration wanted: set by register(), cleared by unregister() and stop(). */
  #wanted = false;
  #attempt = 0;
  #cancelRetry: (() => void) | null = null;
  #retryAt: number | null = null;
  #lastError: string | null = null;
  /** Bumped by every registration attempt, so a late answer to an abandoned one is ignored. */
  #tries = 0;

  constructor(options: SoftphoneOptions) {
    this.#options = options;
    this.#speakerId = options.speakerId;
    const uri = UserAgent.makeURI(`sip:${options.username}@${options.realm}`);
    if (!uri) throw new Error(`not a SIP address: ${options.username}@${options.realm}`);
    this.#ua = new UserAgent({
      uri,
      displayName: options.displayName,
      authorizationUsername: options.username,
      authorizationPassword: options.password,
      transportOptions: { server: options.server },
      logConfiguration: false,
      logLevel: "error",
      // A PBX on 127.0.0.1 must not wait on a public STUN server (media notes, pitfall 7).
      sessionDescriptionHandlerFactoryOptions: { peerConnectionConfiguration: { iceServers: [] }, iceGatheringTimeout: 500 },
      delegate: {
        onInvite: (invitation) => this.#incoming(invitation),
        onDisconnect: (error) => this.#lost(error?.message ?? "connection to the SIP server lost"),
      },
    });
    this.#registerer = new Registerer(this.#ua, { expires: options.expires ?? 300 });
    this.#registerer.stateChange.addListener((state) => {
      if (state === RegistererState.Registered) this.#setRegistration("registered");
      // A registration that lapses while wanted (a refresh refused after a server restart) is retried.
      else if (state === RegistererState.Unregistered && this.#wanted && this.#options.reconnect) this.#lost("registration lapsed");
      else if (state === RegistererState.Unregistered || state === RegistererState.Terminated) this.#setRegistration("unregistered");
    });
  }

  get registration(): RegistrationState {
    return this.#registration;
  }

  /** When the next reconnection attempt is due (clock ms), while `reconnecting`. */
  get retryAt(): number | null {
    return this.#retryAt;
  }

  /** Why the last attempt to connect or register failed, for the agent; null after success. */
  get lastError(): string | null {
    return this.#lastError;
  }

  get calls(): CallInfo[] {
    return [...this.#calls.values()].map((c) => ({ ...c.info }));
  }

  onRegistration(listener: Listener<RegistrationState>): () => void {
    this.#registrationListeners.add(listener);
    return () => this.#registrationListeners.delete(listener);
  }

  onCall(listener: Listener<CallInfo>): () => void {
    this.#callListeners.add(listener);
    return () => this.#callListeners.delete(listener);
  }

  /** SIP INFO digits the far end sends (the server relays DTMF this way when asked). */
  onDtmf(listener: Listener<string>): () => void {
    this.#dtmfListeners.add(listener);
    return () => this.#dtmfListeners.delete(listener);
  }

  async register(): Promise<void> {
    this.#wanted = true;
    this.#cancelRetry?.();
    this.#cancelRetry = null;
    this.#retryAt = null;
    const mine = ++this.#tries;
    this.#setRegistration("registering");
    try {
      await this.#withDeadline(this.#connectAndRegister());
      if (mine !== this.#tries) return;
      this.#attempt = 0;
      this.#lastError = null;
      // sip.js's registerer stays "Registered" through a lost connection, so the fresh 200 OK
      // brings no state change of its own.
      this.#setRegistration("registered");
    } catch (err) {
      // A newer attempt (retry now, or the back-off's next one) has taken over.
      if (mine !== this.#tries) throw err;
      this.#lastError = errorMessage(err);
      // Wrong credentials stay wrong: only a lost or unreachable server is worth retrying.
      if (this.#options.reconnect && this.#wanted && !(err instanceof RegistrationRefused && (err.status === 401 || err.status === 403))) {
        this.#scheduleRetry();
      } else {
        this.#setRegistration("failed");
      }
      throw err;
    }
  }

  async #connectAndRegister(): Promise<void> {
    if (!this.#ua.isConnected()) await (this.#ua.state === "Started" ? this.#ua.reconnect() : this.#ua.start());
    await new Promise<void>((resolve, reject) => {
      this.#registerer
        .register({
          requestDelegate: {
            onAccept: () => resolve(),
            onReject: (response) => reject(new RegistrationRefused(response.message.statusCode ?? 0, response.message.reasonPhrase ?? "")),
          },
        })
        .catch(reject);
    });
  }

  /**
   * A REGISTER sent as the connection drops is never answered (nor timed out for 32 s), and a
   * reconnect to a server half up can hang: when reconnecting by itself, an attempt has a deadline.
   */
  #withDeadline(attempt: Promise<void>): Promise<void> {
    const reconnect = this.#options.reconnect;
    if (!reconnect) return attempt;
    return new Promise<void>((resolve, reject) => {
      const cancel = reconnect.clock.after(REGISTER_DEADLINE_MS, () => reject(new Error("the SIP server did not answer the registration")));
      attempt.then(
        () => {
          cancel();
          resolve();
        },
        (err: unknown) => {
          cancel();
          reject(err);
        },
      );
    });
  }

  /** Tries again at once rather than waiting out the back-off (the agent's "Reconnect now"). */
  retryNow(): void {
    if (!this.#wanted) return;
    this.#attempt = 0;
    this.register().catch(() => undefined);
  }

  async unregister(): Promise<void> {
    this.#wanted = false;
    this.#cancelRetry?.();
    this.#cancelRetry = null;
    await this.#registerer.unregister();
  }

  async stop(): Promise<void> {
    this.#wanted = false;
    this.#cancelRetry?.();
    this.#cancelRetry = null;
    for (const { session } of this.#calls.values()) await this.#end(session).catch(() => undefined);
    await this.#ua.stop();
  }

  /** Where the far end's audio plays, for this and later calls. */
  async setSpeaker(deviceId: string | undefined): Promise<void> {
    this.#speakerId = deviceId;
    await Promise.all([...this.#calls.values()].map(({ player }) => (player ? applySink(player, deviceId) : undefined)));
  }

  /** Stops (or resumes) sending the microphone on a call; the far end hears silence meanwhile. */
  setMuted(id: string, muted: boolean): void {
    const call = this.#calls.get(id);
    if (!call) throw new Error(`no call ${id}`);
    const handler = call.session.sessionDescriptionHandler;
    if (handler instanceof Web.SessionDescriptionHandler) {
      for (const track of handler.localMediaStream.getAudioTracks()) track.enabled = !muted;
    }
    if (call.info.muted === muted) return;
    call.info.muted = muted;
    this.#emit(call.info);
  }

  /** Dial an extension or number; resolves with the call's id once the INVITE is on its way. */
  async call(target: string): Promise<string> {
    const uri = UserAgent.makeURI(`sip:${target}@${this.#options.realm}`);
    if (!uri) throw new Error(`cannot dial ${target}`);
    const inviter = new Inviter(this.#ua, uri, { sessionDescriptionHandlerOptions: handlerOptions(this.#options.audio ?? true) });
    const info: CallInfo = {
      id: inviter.id,
      callId: inviter.request.callId,
      direction: "outbound",
      remoteUser: target,
      remoteName: target,
      state: "dialing",
      muted: false,
      offer: {},
    };
    this.#track(inviter, info);
    await inviter.invite({
      requestDelegate: {
        onProgress: () => this.#update(info, "ringing"),
        onReject: (response) => {
          info.failure = { code: response.message.statusCode ?? 0, reason: response.message.reasonPhrase ?? "" };
        },
      },
    });
    return inviter.id;
  }

  async answer(id: string): Promise<void> {
    const call = this.#calls.get(id);
    if (!(call?.session instanceof Invitation)) throw new Error(`no incoming call ${id}`);
    await call.session.accept({ sessionDescriptionHandlerOptions: handlerOptions(this.#options.audio ?? true) });
  }

  async reject(id: string): Promise<void> {
    const call = this.#calls.get(id);
    if (!(call?.session instanceof Invitation)) throw new Error(`no incoming call ${id}`);
    await call.session.reject({ statusCode: 486 });
  }

  async hangup(id: string): Promise<void> {
    const call = this.#calls.get(id);
    if (call) await this.#end(call.session);
  }

  async hold(id: string, held: boolean): Promise<void> {
    const call = this.#calls.get(id);
    if (!call || call.session.state !== SessionState.Established) throw new Error(`no active call ${id}`);
    // Resolves once the far end has accepted the new media direction, not when the INVITE leaves.
    await new Promise<void>((resolve, reject) => {
      call.session
        .invite({
          sessionDescriptionHandlerModifiers: held ? [Web.holdModifier] : [],
          requestDelegate: {
            onAccept: () => {
              this.#update(call.info, held ? "held" : "active");
              resolve();
            },
            onReject: (response) => reject(new Error(`${held ? "hold" : "resume"} refused: ${response.message.statusCode}`)),
          },
        })
        .catch(reject);
    });
  }

  /**
   * RFC 4733 digits on the call's audio (what a desk phone sends). Digits still waiting to be
   * played are kept: insertDTMF alone replaces them, and a quick second key press would eat the first.
   */
  sendDtmf(id: string, digits: string): boolean {
    const handler = this.#calls.get(id)?.session.sessionDescriptionHandler;
    const sender = handler instanceof Web.SessionDescriptionHandler ? handler.peerConnection?.getSenders().find((s) => s.dtmf !== null) : undefined;
    const dtmf = sender?.dtmf;
    if (!dtmf?.canInsertDTMF) return false;
    dtmf.insertDTMF(dtmf.toneBuffer + digits, 100, 70);
    return true;
  }

  /** The same digits as SIP INFO (application/dtmf-relay), for far ends that want them out of band. */
  async sendInfoDtmf(id: string, digit: string): Promise<void> {
    const call = this.#calls.get(id);
    if (!call) throw new Error(`no call ${id}`);
    await call.session.info({
      requestOptions: { body: { contentDisposition: "render", contentType: "application/dtmf-relay", content: `Signal=${digit}\r\nDuration=160` } },
    });
  }

  /** The far end's audio, to play in an <audio> element or analyse. */
  remoteStream(id: string): MediaStream | null {
    const handler = this.#calls.get(id)?.session.sessionDescriptionHandler;
    return handler instanceof Web.SessionDescriptionHandler ? handler.remoteMediaStream : null;
  }

  /** The call's peer connection, for diagnostics beyond stats() (tests read getStats() from it). */
  peerConnection(id: string): RTCPeerConnection | null {
    const handler = this.#calls.get(id)?.session.sessionDescriptionHandler;
    return handler instanceof Web.SessionDescriptionHandler ? (handler.peerConnection ?? null) : null;
  }

  /** The negotiated SDP both ways, for diagnostics. */
  descriptions(id: string): { local: string; remote: string } | null {
    const handler = this.#calls.get(id)?.session.sessionDescriptionHandler;
    const pc = handler instanceof Web.SessionDescriptionHandler ? handler.peerConnection : undefined;
    if (!pc) return null;
    return { local: pc.localDescription?.sdp ?? "", remote: pc.remoteDescription?.sdp ?? "" };
  }

  /** Audio packets and level both ways, for the call-quality display and diagnostics. */
  async stats(id: string): Promise<CallStats | null> {
    const handler = this.#calls.get(id)?.session.sessionDescriptionHandler;
    if (!(handler instanceof Web.SessionDescriptionHandler)) return null;
    const pc = handler.peerConnection;
    if (!pc) return null;
    const report = await pc.getStats();
    const out: CallStats = { packetsReceived: 0, packetsSent: 0, audioLevel: 0, localLevel: 0, packetsLost: 0, jitterMs: 0 };
    report.forEach((entry: { type: string; kind?: string; packetsReceived?: number; packetsSent?: number; audioLevel?: number; packetsLost?: number; jitter?: number }) => {
      if (entry.type === "inbound-rtp" && entry.kind === "audio") {
        out.packetsReceived += entry.packetsReceived ?? 0;
        out.packetsLost += entry.packetsLost ?? 0;
        out.audioLevel = entry.audioLevel ?? out.audioLevel;
        out.jitterMs = (entry.jitter ?? 0) * 1000;
      }
      if (entry.type === "outbound-rtp" && entry.kind === "audio") out.packetsSent += entry.packetsSent ?? 0;
      if (entry.type === "media-source" && entry.kind === "audio") out.localLevel = entry.audioLevel ?? out.localLevel;
    });
    return out;
  }

  #incoming(invitation: Invitation): void {
    const identity = invitation.remoteIdentity;
    const request = invitation.request;
    const info: CallInfo = {
      id: invitation.id,
      callId: request.callId,
      direction: "inbound",
      remoteUser: identity.uri.user ?? "",
      remoteName: identity.displayName || identity.uri.user || "",
      state: "incoming",
      muted: false,
      offer: offerDetails((name) => (request.hasHeader(name) ? request.getHeader(name) : undefined)),
    };
    this.#track(invitation, info);
  }

  #track(session: Session, info: CallInfo): void {
    const call: { session: Session; info: CallInfo; player?: HTMLAudioElement } = { session, info };
    this.#calls.set(info.id, call);
    session.delegate = {
      onInfo: (request) => {
        const body = request.request.body ?? "";
        const digit = /Signal=\s*([0-9A-D*#])/i.exec(body)?.[1];
        void request.accept();
        if (digit) for (const l of this.#dtmfListeners) l(digit);
      },
    };
    session.stateChange.addListener((state) => {
      if (state === SessionState.Established) {
        this.#update(info, "active");
        call.player ??= this.#play(session);
      }
      if (state === SessionState.Terminated) {
        if (call.player) call.player.srcObject = null;
        this.#calls.delete(info.id);
        // sip.js hands a refused INVITE's response to its request delegate (which notes the
        // failure) only after this change: the end is told once that has run.
        if (session instanceof Inviter && info.state !== "active" && info.state !== "held") queueMicrotask(() => this.#update(info, "ended"));
        else this.#update(info, "ended");
      }
    });
    this.#emit(info);
  }

  /**
   * Plays the call's audio from the moment it is established until it ends. Chromium drains a
   * call's jitter buffer only while something renders the stream: audio left unplayed, even
   * for a few seconds, piles up there (up to 4 s) and is then heard that late, trimmed back
   * only slowly by time-stretching.
   */
  #play(session: Session): HTMLAudioElement | undefined {
    const handler = session.sessionDescriptionHandler;
    if (!(handler instanceof Web.SessionDescriptionHandler)) return undefined;
    const player = new Audio();
    player.muted = this.#options.muteRemoteAudio ?? false;
    // The handler keeps one stream for the call and swaps tracks in it on re-negotiation.
    player.srcObject = handler.remoteMediaStream;
    void applySink(player, this.#speakerId).finally(() => player.play().catch(() => undefined));
    return player;
  }

  async #end(session: Session): Promise<void> {
    if (session instanceof Inviter && (session.state === SessionState.Initial || session.state === SessionState.Establishing)) {
      await session.cancel();
    } else if (session instanceof Invitation && (session.state === SessionState.Initial || session.state === SessionState.Establishing)) {
      await session.reject();
    } else if (session.state === SessionState.Established) {
      await session.bye();
    }
  }

  /** The transport dropped (or a wanted registration lapsed): retry with back-off when asked to. */
  #lost(reason: string): void {
    this.#lastError = reason;
    if (!this.#wanted || !this.#options.reconnect) {
      this.#setRegistration("failed");
      return;
    }
    // An attempt under way fails (or meets its deadline) by itself and schedules the next.
    if (this.#cancelRetry === null && this.#registration !== "registering") this.#scheduleRetry();
  }

  #scheduleRetry(): void {
    const reconnect = this.#options.reconnect;
    if (!reconnect) return;
    this.#cancelRetry?.();
    const delay = backoffDelay(this.#attempt++, reconnect.random ?? Math.random);
    this.#retryAt = reconnect.clock.now() + delay;
    this.#cancelRetry = reconnect.clock.after(delay, () => {
      this.#cancelRetry = null;
      if (this.#wanted) this.register().catch(() => undefined);
    });
    this.#setRegistration("reconnecting", true);
  }

  #update(info: CallInfo, state: CallState): void {
    if (info.state === state || info.state === "ended") return;
    info.state = state;
    this.#emit(info);
  }

  #emit(info: CallInfo): void {
    for (const l of this.#callListeners) l({ ...info });
  }

  /** `force`: tell listeners again (a new retry time) even when the state is the same. */
  #setRegistration(state: RegistrationState, force = false): void {
    if (this.#registration === state && !force) return;
    this.#registration = state;
    for (const l of this.#registrationListeners) l(state);
  }
}

/** A REGISTER answered with an error status (401/403: the device's credentials are not accepted). */
export class RegistrationRefused extends Error {
  override readonly name = "RegistrationRefused";

  constructor(
    readonly status: number,
    reason: string,
  ) {
    super(`registration refused: ${status} ${reason}`);
  }
}

/** Output device choice where the browser supports it; the default device otherwise. */
async function applySink(player: HTMLAudioElement, deviceId: string | undefined): Promise<void> {
  if (typeof player.setSinkId !== "function") return;
  await player.setSinkId(deviceId ?? "").catch(() => undefined);
}
