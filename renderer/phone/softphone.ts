// The console's softphone: one sip.js user agent registered as the agent's device over the
// server's /sip WebSocket, with its calls (place, answer, reject, hold, DTMF, hang up) and their audio.
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
  /** Microphone constraints; tests turn the processing off to measure levels. */
  audio?: MediaTrackConstraints | boolean;
  /** Play the far end's audio muted (tests that read it through WebAudio). Default false. */
  muteRemoteAudio?: boolean;
}

export type RegistrationState = "unregistered" | "registering" | "registered" | "failed";
export type CallState = "dialing" | "ringing" | "incoming" | "active" | "held" | "ended";

export interface CallInfo {
  id: string;
  direction: "inbound" | "outbound";
  remoteUser: string;
  remoteName: string;
  state: CallState;
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

export class Softphone {
  readonly #ua: UserAgent;
  readonly #registerer: Registerer;
  readonly #options: SoftphoneOptions;
  readonly #calls = new Map<string, { session: Session; info: CallInfo; player?: HTMLAudioElement }>();
  readonly #callListeners = new Set<Listener<CallInfo>>();
  readonly #registrationListeners = new Set<Listener<RegistrationState>>();
  readonly #dtmfListeners = new Set<Listener<string>>();
  #registration: RegistrationState = "unregistered";

  constructor(options: SoftphoneOptions) {
    this.#options = options;
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
        onDisconnect: () => this.#setRegistration("failed"),
      },
    });
    this.#registerer = new Registerer(this.#ua, { expires: options.expires ?? 300 });
    this.#registerer.stateChange.addListener((state) => {
      if (state === RegistererState.Registered) this.#setRegistration("registered");
      else if (state === RegistererState.Unregistered || state === RegistererState.Terminated) this.#setRegistration("unregistered");
    });
  }

  get registration(): RegistrationState {
    return this.#registration;
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
    this.#setRegistration("registering");
    try {
      if (!this.#ua.isConnected()) await this.#ua.start();
      await new Promise<void>((resolve, reject) => {
        void this.#registerer.register({
          requestDelegate: {
            onAccept: () => resolve(),
            onReject: (response) => reject(new Error(`registration refused: ${response.message.statusCode} ${response.message.reasonPhrase}`)),
          },
        });
      });
    } catch (err) {
      this.#setRegistration("failed");
      throw err;
    }
  }

  async unregister(): Promise<void> {
    await this.#registerer.unregister();
  }

  async stop(): Promise<void> {
    for (const { session } of this.#calls.values()) await this.#end(session).catch(() => undefined);
    await this.#ua.stop();
  }

  /** Dial an extension or number; resolves with the call's id once the INVITE is on its way. */
  async call(target: string): Promise<string> {
    const uri = UserAgent.makeURI(`sip:${target}@${this.#options.realm}`);
    if (!uri) throw new Error(`cannot dial ${target}`);
    const inviter = new Inviter(this.#ua, uri, { sessionDescriptionHandlerOptions: handlerOptions(this.#options.audio ?? true) });
    const info: CallInfo = { id: inviter.id, direction: "outbound", remoteUser: target, remoteName: target, state: "dialing" };
    this.#track(inviter, info);
    await inviter.invite({
      requestDelegate: {
        onProgress: () => this.#update(info, "ringing"),
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

  /** RFC 4733 digits on the call's audio (what a desk phone sends). */
  sendDtmf(id: string, digits: string): boolean {
    const handler = this.#calls.get(id)?.session.sessionDescriptionHandler;
    return handler instanceof Web.SessionDescriptionHandler ? handler.sendDtmf(digits) : false;
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
    const info: CallInfo = {
      id: invitation.id,
      direction: "inbound",
      remoteUser: identity.uri.user ?? "",
      remoteName: identity.displayName || identity.uri.user || "",
      state: "incoming",
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
        this.#update(info, "ended");
        this.#calls.delete(info.id);
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
    player.play().catch(() => undefined);
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

  #update(info: CallInfo, state: CallState): void {
    if (info.state === state || info.state === "ended") return;
    info.state = state;
    this.#emit(info);
  }

  #emit(info: CallInfo): void {
    for (const l of this.#callListeners) l({ ...info });
  }

  #setRegistration(state: RegistrationState): void {
    if (this.#registration === state) return;
    this.#registration = state;
    for (const l of this.#registrationListeners) l(state);
  }
}
