// The phone line as the store sees it, apart from sip.js: registration states, calls and what
// a queue's offer carries. Kept free of the DOM so the store's slices can use it anywhere.

/** A final response to an outgoing INVITE: its status and reason phrase. */
export interface CallFailure {
  code: number;
  reason: string;
}

/** `reconnecting`: the connection was lost and a retry is scheduled (see retryAt). */
export type RegistrationState = "unregistered" | "registering" | "registered" | "reconnecting" | "failed";

export type CallState = "dialing" | "ringing" | "incoming" | "active" | "held" | "ended";

/**
 * What a queue's offer says about the caller, read from the INVITE (offerDetails in softphone.ts
 * is the one place that reads it, so the queue engine and the console agree on the header names).
 */
export interface OfferDetails {
  queueId?: string;
  queueName?: string;
  /** Seconds the caller waited in the queue before this offer. */
  waitedS?: number;
  /** The offer is a queue callback: accepting it dials this number (local addition). */
  callbackNumber?: string;
}

export interface CallInfo {
  id: string;
  /** The SIP Call-ID: the uuid of this leg's channel in the channels API. */
  callId: string;
  direction: "inbound" | "outbound";
  remoteUser: string;
  remoteName: string;
  state: CallState;
  muted: boolean;
  offer: OfferDetails;
  /** An outgoing call refused before it was answered: the final response (set as it ends). */
  failure?: CallFailure;
}

/** The phone line as the store drives it; renderer/phone/softphone.ts is the real one. */
export interface PhoneLine {
  readonly registration: RegistrationState;
  /** When the next reconnection attempt is due (clock ms), while `reconnecting`. */
  readonly retryAt: number | null;
  readonly lastError: string | null;
  onRegistration(listener: (state: RegistrationState) => void): () => void;
  onCall(listener: (call: CallInfo) => void): () => void;
  register(): Promise<void>;
  retryNow(): void;
  stop(): Promise<void>;
  call(target: string): Promise<string>;
  answer(id: string): Promise<void>;
  reject(id: string): Promise<void>;
  hangup(id: string): Promise<void>;
  hold(id: string, held: boolean): Promise<void>;
  setMuted(id: string, muted: boolean): void;
  sendDtmf(id: string, digits: string): boolean;
  setSpeaker(deviceId: string | undefined): Promise<void>;
}

export interface PhoneLineOptions {
  /** ws(s)://host/sip */
  server: string;
  username: string;
  password: string;
  realm: string;
  displayName?: string;
  speakerId?: string;
  microphoneId?: string;
}

/** Makes the line; may load its code first (the sign-in screen loads without sip.js). */
export type PhoneFactory = (options: PhoneLineOptions) => PhoneLine | Promise<PhoneLine>;

/** The ring tone and the desktop notification for an offered call. */
export interface CallAlerts {
  /** Starts the ring tone on the chosen output device (the default when undefined). */
  ring(deviceId: string | undefined): void;
  stopRing(): void;
  /** Shows the desktop notification; clicking it brings the console forward. */
  notify(call: CallInfo): void;
  dismiss(callId: string): void;
  /** A short tone in the agent's ear: an offer is being answered by itself (auto-answer). */
  tone(): void;
}
