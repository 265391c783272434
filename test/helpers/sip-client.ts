// A scripted SIP-over-WebSocket client for tests: sends hand-written messages, reads what comes
// back with its own small parser, and computes digests itself (node:crypto), apart from the server.
import { createHash, randomBytes } from "node:crypto";
import WebSocket from "ws";
import type { TestApi } from "./api.js";

export interface SipMessage {
  startLine: string;
  /** Set on responses. */
  status?: number;
  /** Set on requests. */
  method?: string;
  /** Set on requests. */
  uri?: string;
  /** Lower-case long header names. */
  headers: Map<string, string[]>;
  body: string;
  text: string;
  header(name: string): string | undefined;
}

const COMPACT: Record<string, string> = { v: "via", f: "from", t: "to", i: "call-id", m: "contact", l: "content-length" };

export function parseSipText(text: string): SipMessage {
  const end = text.indexOf("\r\n\r\n");
  const head = end === -1 ? text : text.slice(0, end);
  const [startLine = "", ...lines] = head.split("\r\n");
  const headers = new Map<string, string[]>();
  for (const line of lines) {
    const colon = line.indexOf(":");
    const raw = line.slice(0, colon).trim().toLowerCase();
    const name = COMPACT[raw] ?? raw;
    headers.set(name, [...(headers.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  const status = /^SIP\/2\.0 (\d{3})/.exec(startLine);
  const request = /^(\S+) (\S+) SIP\/2\.0$/.exec(startLine);
  return {
    startLine,
    status: status ? Number(status[1]) : undefined,
    method: request?.[1],
    uri: request?.[2],
    headers,
    body: end === -1 ? "" : text.slice(end + 4),
    text,
    header: (name) => headers.get(name.toLowerCase())?.[0],
  };
}

export const hex = (bytes = 8): string => randomBytes(bytes).toString("hex");
const md5 = (s: string): string => createHash("md5").update(s).digest("hex");

/** The parameters of a `Digest a="b", c=d` header. */
export function digestParams(header: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of header.replace(/^Digest\s+/i, "").matchAll(/([a-z0-9_-]+)=(?:"([^"]*)"|([^,\s]*))/gi)) {
    out[(m[1] ?? "").toLowerCase()] = m[2] ?? m[3] ?? "";
  }
  return out;
}

export interface DigestAnswer {
  username: string;
  password: string;
  method: string;
  uri: string;
  /** The WWW-Authenticate value of the challenge. */
  challenge: string;
  nc?: number;
  /** Answer without qop (RFC 2069 style) even when auth is offered. */
  noQop?: boolean;
  /** Override the realm named in the answer (and hashed). */
  realm?: string;
}

/** An Authorization header value answering a challenge, computed per RFC 2617. */
export function authorization(a: DigestAnswer): string {
  const p = digestParams(a.challenge);
  const realm = a.realm ?? p.realm ?? "";
  const nonce = p.nonce ?? "";
  const ha1 = md5(`${a.username}:${realm}:${a.password}`);
  const ha2 = md5(`${a.method}:${a.uri}`);
  if (a.noQop) {
    return `Digest username="${a.username}", realm="${realm}", nonce="${nonce}", uri="${a.uri}", response="${md5(`${ha1}:${nonce}:${ha2}`)}", algorithm=MD5`;
  }
  const nc = (a.nc ?? 1).toString(16).padStart(8, "0");
  const cnonce = hex(6);
  const response = md5(`${ha1}:${nonce}:${nc}:${cnonce}:auth:${ha2}`);
  return `Digest username="${a.username}", realm="${realm}", nonce="${nonce}", uri="${a.uri}", response="${response}", algorithm=MD5, qop=auth, nc=${nc}, cnonce="${cnonce}"`;
}

export interface ConnectOptions {
  /** The subprotocols offered; `sip` unless told. */
  protocols?: string[];
  headers?: Record<string, string>;
}

/** One WebSocket to /sip; every text message it receives is queued for `next`. */
export class SipSocket {
  readonly #ws: WebSocket;
  readonly #inbox: string[] = [];
  #waiter: (() => void) | null = null;
  closed = false;

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.on("message", (data) => {
      this.#inbox.push(Buffer.isBuffer(data) ? data.toString("utf8") : String(data));
      this.#waiter?.();
    });
    ws.on("close", () => {
      this.closed = true;
      this.#waiter?.();
    });
  }

  static connect(baseUrl: string, options: ConnectOptions = {}): Promise<SipSocket> {
    const url = `${baseUrl.replace(/^http/, "ws")}/sip`;
    const ws = new WebSocket(url, options.protocols ?? ["sip"], { headers: options.headers });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new SipSocket(ws)));
      ws.once("unexpected-response", (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode ?? 0}`)));
      ws.once("error", reject);
    });
  }

  get protocol(): string {
    return this.#ws.protocol;
  }

  send(data: string | Buffer): void {
    this.#ws.send(data);
  }

  /** The next message as text, or an error after `timeoutMs`. */
  async nextText(timeoutMs = 3000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (this.#inbox.length === 0) {
      if (this.closed) throw new Error("socket closed");
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("no SIP message arrived in time");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.#waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#waiter = null;
    }
    return this.#inbox.shift() ?? "";
  }

  async next(timeoutMs = 3000): Promise<SipMessage> {
    return parseSipText(await this.nextText(timeoutMs));
  }

  /** Resolves when nothing arrived for `ms`; throws with what came otherwise. */
  async expectSilence(ms = 300): Promise<void> {
    try {
      const text = await this.nextText(ms);
      throw new Error(`expected nothing, got: ${text.split("\r\n")[0] ?? ""}`);
    } catch (err) {
      if (err instanceof Error && err.message === "no SIP message arrived in time") return;
      throw err;
    }
  }

  close(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#ws.once("close", () => resolve());
      this.#ws.close();
    });
  }
}

export interface PhoneOptions {
  username: string;
  password: string;
  realm: string;
  /** The Request-URI host; the realm unless told. */
  registrar?: string;
  /** The contact URI, a made-up `.invalid` host like sip.js uses. */
  contact?: string;
}

export interface RegisterOptions {
  /** The Expires header; omitted when undefined. */
  expires?: number;
  /** An `expires` parameter on the Contact. */
  contactExpires?: number;
  /** Send `Contact: *`. */
  star?: boolean;
  /** Send no Contact (a query). */
  noContact?: boolean;
  authorization?: string;
  /** Use this CSeq instead of the next one. */
  cseq?: number;
  extraHeaders?: string[];
}

/** A phone on a socket: one AOR and contact, one Call-ID, CSeq counting up, as a UA does. */
export class SipPhone {
  readonly callId = `${hex()}@test.invalid`;
  readonly fromTag = hex(4);
  readonly contact: string;
  cseq = 0;

  constructor(
    readonly socket: SipSocket,
    readonly options: PhoneOptions,
  ) {
    this.contact = options.contact ?? `sip:${hex(4)}@${hex(4)}.invalid;transport=ws`;
  }

  get requestUri(): string {
    return `sip:${this.options.registrar ?? this.options.realm}`;
  }

  registerText(o: RegisterOptions = {}): string {
    const cseq = o.cseq ?? ++this.cseq;
    const aor = `sip:${this.options.username}@${this.options.realm}`;
    const lines = [
      `REGISTER ${this.requestUri} SIP/2.0`,
      `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=z9hG4bK${hex()}`,
      "Max-Forwards: 70",
      `To: <${aor}>`,
      `From: <${aor}>;tag=${this.fromTag}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${cseq} REGISTER`,
    ];
    if (o.star) lines.push("Contact: *");
    else if (!o.noContact) lines.push(`Contact: <${this.contact}>;+sip.ice;reg-id=1${o.contactExpires === undefined ? "" : `;expires=${o.contactExpires}`}`);
    if (o.expires !== undefined) lines.push(`Expires: ${o.expires}`);
    if (o.authorization) lines.push(`Authorization: ${o.authorization}`);
    lines.push(...(o.extraHeaders ?? []), "Content-Length: 0", "", "");
    return lines.join("\r\n");
  }

  /** Sends one REGISTER and returns the answer (no challenge handling). */
  async send(o: RegisterOptions = {}): Promise<SipMessage> {
    this.socket.send(this.registerText(o));
    return this.socket.next();
  }

  /** REGISTER, answer the 401 with the password, and return the final answer. */
  async register(o: RegisterOptions = {}, password = this.options.password): Promise<SipMessage> {
    const first = await this.send(o);
    if (first.status !== 401) return first;
    const challenge = first.header("www-authenticate") ?? "";
    const auth = authorization({ username: this.options.username, password, method: "REGISTER", uri: this.requestUri, challenge });
    return this.send({ ...o, authorization: auth });
  }

  unregister(): Promise<SipMessage> {
    return this.register({ expires: 0 });
  }
}

/** The `expires` of each Contact in a 200 to REGISTER, keyed by contact URI. */
export function contactExpiries(message: SipMessage): Map<string, number> {
  const out = new Map<string, number>();
  for (const value of message.headers.get("contact") ?? []) {
    const m = /^<([^>]+)>.*;expires=(\d+)/.exec(value);
    if (m?.[1] && m[2]) out.set(m[1], Number(m[2]));
  }
  return out;
}

export interface TestDevice {
  id: string;
  username: string;
  password: string;
}

/** A new device of the account made over the API, with fresh SIP credentials (so unregistered). */
export async function newDevice(
  api: TestApi,
  auth: { token: string; accountId: string },
  fields: Record<string, unknown> = {},
  sip: Record<string, unknown> = {},
): Promise<TestDevice> {
  const username = `sip_${hex(4)}`;
  const password = hex(8);
  const res = await api.call<{ id: string }>("PUT", `/v2/accounts/${auth.accountId}/devices`, {
    token: auth.token,
    data: { name: username, ...fields, sip: { username, password, ...sip } },
  });
  if (res.status !== 201) throw new Error(`device not created: ${res.status} ${res.text}`);
  return { id: res.body.data.id, username, password };
}

/** The URI inside a Contact (or From/To) value: `<sip:x@y;transport=ws>;expires=1` gives `sip:x@y;transport=ws`. */
export function uriOf(nameAddr: string): string {
  return /<([^>]+)>/.exec(nameAddr)?.[1] ?? nameAddr.split(";")[0] ?? "";
}

/** The tag parameter of a From or To value (after its `<uri>`), if any. */
export function tagOf(nameAddr: string): string | undefined {
  const close = nameAddr.lastIndexOf(">");
  return /;\s*tag=([^;\s]+)/i.exec(close === -1 ? nameAddr : nameAddr.slice(close))?.[1];
}

export const TEST_SDP = [
  "v=0",
  "o=- 1 1 IN IP4 127.0.0.1",
  "s=-",
  "c=IN IP4 127.0.0.1",
  "t=0 0",
  "m=audio 40000 RTP/AVP 0 101",
  "a=rtpmap:0 PCMU/8000",
  "a=rtpmap:101 telephone-event/8000",
  "a=sendrecv",
  "",
].join("\r\n");

export interface ResponseSpec {
  reason?: string;
  /** Added to To when the request's To has none. */
  toTag?: string;
  /** A Contact URI (written `<uri>`). */
  contact?: string;
  body?: string;
  contentType?: string;
  extra?: string[];
}

/** A response by hand: the request's Via, From, Call-ID and CSeq; To with a tag added. */
export function responseTo(request: SipMessage, status: number, o: ResponseSpec = {}): string {
  const to = request.header("to") ?? "";
  const lines = [
    `SIP/2.0 ${status} ${o.reason ?? "Whatever"}`,
    ...(request.headers.get("via") ?? []).map((v) => `Via: ${v}`),
    `From: ${request.header("from") ?? ""}`,
    `To: ${tagOf(to) === undefined && o.toTag !== undefined ? `${to};tag=${o.toTag}` : to}`,
    `Call-ID: ${request.header("call-id") ?? ""}`,
    `CSeq: ${request.header("cseq") ?? ""}`,
  ];
  if (o.contact) lines.push(`Contact: <${o.contact}>`);
  return finishMessage(lines, o);
}

function finishMessage(lines: string[], o: { body?: string; contentType?: string; extra?: string[] }): string {
  const body = o.body ?? "";
  if (body !== "") lines.push(`Content-Type: ${o.contentType ?? "application/sdp"}`);
  lines.push(...(o.extra ?? []), `Content-Length: ${Buffer.byteLength(body)}`, "", body);
  return lines.join("\r\n");
}

export interface RequestSpec {
  body?: string;
  contentType?: string;
  extra?: string[];
  /** Use this CSeq instead of the next one. */
  cseq?: number;
  branch?: string;
}

/** One side of a dialog as a phone keeps it, to write its requests inside it by hand (§12.2.1.1). */
export class PhoneDialog {
  constructor(
    readonly socket: SipSocket,
    readonly callId: string,
    /** This phone's From/To value, its tag included. */
    readonly localParty: string,
    /** The server's From/To value, its tag included. */
    readonly remoteParty: string,
    /** Where requests go: the server's Contact URI. */
    readonly remoteTarget: string,
    public cseq: number,
  ) {}

  /** The text of a request in the dialog; ACK uses the CSeq given (that of its INVITE). */
  text(method: string, o: RequestSpec = {}): string {
    const cseq = o.cseq ?? (method === "ACK" ? this.cseq : ++this.cseq);
    const lines = [
      `${method} ${this.remoteTarget} SIP/2.0`,
      `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=${o.branch ?? `z9hG4bK${hex()}`}`,
      "Max-Forwards: 70",
      `From: ${this.localParty}`,
      `To: ${this.remoteParty}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${cseq} ${method}`,
    ];
    if (method === "INVITE") lines.push(`Contact: <sip:${hex(4)}@${hex(4)}.invalid;transport=ws>`);
    return finishMessage(lines, o);
  }

  send(method: string, o: RequestSpec = {}): void {
    this.socket.send(this.text(method, o));
  }

  /** Sends a request and returns the response to it (skipping a 100 Trying). */
  async request(method: string, o: RequestSpec = {}): Promise<SipMessage> {
    this.send(method, o);
    for (;;) {
      const message = await this.socket.next();
      if (message.status !== 100) return message;
    }
  }
}

/** The phone's side of a dialog the server's INVITE opened, once the phone answers with `toTag`. */
export function dialogOfInvite(socket: SipSocket, invite: SipMessage, toTag: string): PhoneDialog {
  return new PhoneDialog(socket, invite.header("call-id") ?? "", `${invite.header("to") ?? ""};tag=${toTag}`, invite.header("from") ?? "", uriOf(invite.header("contact") ?? ""), 0);
}

export interface InviteSpec {
  /** The offer; null sends none. */
  sdp?: string | null;
  contentType?: string;
  proxyAuthorization?: string;
  extra?: string[];
  /** Send no Contact. */
  noContact?: boolean;
  /** Send a From without a tag. */
  noFromTag?: boolean;
}

/** A call a phone places by hand: its INVITE, the 407 dance, ACK, CANCEL, and the dialog after. */
export class PhoneCall {
  readonly callId = `${hex()}@test.invalid`;
  readonly fromTag = hex(4);
  cseq = 0;
  /** The branch of the last INVITE sent. */
  branch = "";

  constructor(
    readonly phone: SipPhone,
    readonly dialled: string,
  ) {}

  get uri(): string {
    return `sip:${this.dialled}@${this.phone.options.realm}`;
  }

  get from(): string {
    return `"Test Phone" <sip:${this.phone.options.username}@${this.phone.options.realm}>;tag=${this.fromTag}`;
  }

  get to(): string {
    return `<${this.uri}>`;
  }

  inviteText(o: InviteSpec = {}): string {
    this.cseq++;
    this.branch = `z9hG4bK${hex()}`;
    const lines = [
      `INVITE ${this.uri} SIP/2.0`,
      `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=${this.branch}`,
      "Max-Forwards: 70",
      `From: ${o.noFromTag ? this.from.replace(/;tag=.*$/, "") : this.from}`,
      `To: ${this.to}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${this.cseq} INVITE`,
    ];
    if (!o.noContact) lines.push(`Contact: <${this.phone.contact}>`);
    if (o.proxyAuthorization) lines.push(`Proxy-Authorization: ${o.proxyAuthorization}`);
    const body = o.sdp === undefined ? TEST_SDP : (o.sdp ?? "");
    return finishMessage(lines, { body, contentType: o.contentType, extra: o.extra });
  }

  /** The ACK of a non-2xx final response: the INVITE's branch and CSeq, To as the response has it. */
  ackFailureText(response: SipMessage): string {
    return this.#transactionText("ACK", response.header("to") ?? "");
  }

  cancelText(): string {
    return this.#transactionText("CANCEL", this.to);
  }

  /** A request of the last INVITE's own transaction: its Request-URI, branch and CSeq number. */
  #transactionText(method: string, to: string): string {
    return [
      `${method} ${this.uri} SIP/2.0`,
      `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=${this.branch}`,
      "Max-Forwards: 70",
      `From: ${this.from}`,
      `To: ${to}`,
      `Call-ID: ${this.callId}`,
      `CSeq: ${this.cseq} ${method}`,
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
  }

  /**
   * INVITE, take the 407 (ACKing it), INVITE again with the phone's credentials; returns the
   * first answer to that (100 Trying when all is well).
   */
  async place(o: InviteSpec = {}, password = this.phone.options.password): Promise<SipMessage> {
    const socket = this.phone.socket;
    socket.send(this.inviteText(o));
    const challenge = await socket.next();
    if (challenge.status !== 407) return challenge;
    socket.send(this.ackFailureText(challenge));
    const proxyAuthorization = authorization({
      username: this.phone.options.username,
      password,
      method: "INVITE",
      uri: this.uri,
      challenge: challenge.header("proxy-authenticate") ?? "",
    });
    socket.send(this.inviteText({ ...o, proxyAuthorization }));
    return socket.next();
  }

  /** The dialog a response with a To tag makes: the server's tag and Contact. */
  dialog(response: SipMessage): PhoneDialog {
    return new PhoneDialog(this.phone.socket, this.callId, this.from, response.header("to") ?? "", uriOf(response.header("contact") ?? ""), this.cseq);
  }
}
