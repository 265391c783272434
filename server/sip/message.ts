// SIP messages as text: parsing through sip.js's core parser behind a wrapper that never throws,
// the raw header view responses are copied from, and the builders of responses and requests.
import { Core } from "sip.js";

export type SipUri = Core.URI;
export type NameAddr = Core.NameAddrHeader;

/** A header as it arrived: canonical lower-case long name (compact forms expanded), raw value. */
export interface RawHeader {
  name: string;
  value: string;
}

/** The start line and the headers of a message, read without any grammar. */
export interface RawMessage {
  startLine: string;
  headers: RawHeader[];
}

export interface SipRequest {
  kind: "request";
  method: string;
  /** The Request-URI. */
  uri: SipUri;
  raw: RawMessage;
  message: Core.IncomingRequestMessage;
  /** `Contact: *`, which sip.js's grammar rejects; it is taken out before parsing and noted here. */
  contactStar: boolean;
}

export interface SipResponse {
  kind: "response";
  status: number;
  method: string;
  cseq: number;
  /** The branch of the top Via: with the CSeq it names the client transaction. */
  branch: string;
  /** The parsed response, for what a dialog needs of it (To tag, Contact, body). */
  message: Core.IncomingResponseMessage;
}

export interface SipInvalid {
  kind: "invalid";
  reason: string;
  /** Set when the text looked like a request, so a 400 can still be built from its headers. */
  request: RawMessage | null;
}

export type ParsedSip = SipRequest | SipResponse | SipInvalid;

const COMPACT: Record<string, string> = {
  v: "via",
  f: "from",
  t: "to",
  i: "call-id",
  m: "contact",
  l: "content-length",
  c: "content-type",
  e: "content-encoding",
  k: "supported",
  s: "subject",
  o: "event",
  u: "allow-events",
  r: "refer-to",
  b: "referred-by",
  x: "session-expires",
};

const REQUEST_LINE = /^([A-Za-z][A-Za-z0-9.!%*_+`'~-]*) (\S+) SIP\/2\.0$/;
const STATUS_LINE = /^SIP\/2\.0 \d{3}( |$)/;

export const REASONS: Record<number, string> = {
  100: "Trying",
  180: "Ringing",
  183: "Session Progress",
  200: "OK",
  202: "Accepted",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  407: "Proxy Authentication Required",
  408: "Request Timeout",
  415: "Unsupported Media Type",
  416: "Unsupported URI Scheme",
  420: "Bad Extension",
  423: "Interval Too Brief",
  433: "Anonymity Disallowed",
  480: "Temporarily Unavailable",
  481: "Call/Transaction Does Not Exist",
  486: "Busy Here",
  487: "Request Terminated",
  488: "Not Acceptable Here",
  491: "Request Pending",
  500: "Server Internal Error",
  501: "Not Implemented",
  503: "Service Unavailable",
  513: "Message Too Large",
  600: "Busy Everywhere",
  603: "Decline",
  604: "Does Not Exist Anywhere",
  606: "Not Acceptable",
};

/** Reads the header section line by line, unfolding continuations; no grammar, so it never fails. */
export function readRaw(text: string): RawMessage {
  const end = text.indexOf("\r\n\r\n");
  const head = end === -1 ? text : text.slice(0, end);
  const lines = head.split(/\r?\n/);
  const startLine = lines.shift() ?? "";
  const headers: RawHeader[] = [];
  for (const line of lines) {
    const last = headers[headers.length - 1];
    if (/^[ \t]/.test(line) && last) {
      last.value = `${last.value} ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    if (!/^[a-z0-9.!%*_+`'~-]+$/.test(name)) continue;
    headers.push({ name: COMPACT[name] ?? name, value: line.slice(colon + 1).trim() });
  }
  return { startLine, headers };
}

export function rawHeader(raw: RawMessage, name: string): string | undefined {
  return raw.headers.find((h) => h.name === name)?.value;
}

export function rawHeaders(raw: RawMessage, name: string): string[] {
  return raw.headers.filter((h) => h.name === name).map((h) => h.value);
}

/** The raw view of a request, when its start line is a request line; else null. */
export function rawRequest(text: string): RawMessage | null {
  const raw = readRaw(text);
  return REQUEST_LINE.test(raw.startLine) ? raw : null;
}

/**
 * Whether a request, however broken, may get an error response: never an ACK (nothing answers one),
 * and only with the client's Via (to travel back) and CSeq (to find its transaction).
 */
export function canAnswer(raw: RawMessage): boolean {
  return !raw.startLine.startsWith("ACK ") && rawHeader(raw, "via") !== undefined && rawHeader(raw, "cseq") !== undefined;
}

// sip.js reports why it gave up through its logger; we keep the last complaint as the reason.
const loggerFactory = new Core.LoggerFactory();
loggerFactory.builtinEnabled = false;
let lastComplaint = "";
loggerFactory.connector = (_level, _category, _label, content) => {
  lastComplaint = String(content);
};
const parserLogger = loggerFactory.getLogger("sip.parser");

const CONTACT_STAR = /^(contact|m)[ \t]*:[ \t]*\*[ \t]*$/i;

const MANDATORY: [string, string][] = [
  ["via", "Via"],
  ["from", "From"],
  ["to", "To"],
  ["call-id", "Call-ID"],
  ["cseq", "CSeq"],
];

/** A UA's request has a dozen or two; more is a message built to be slow to parse. */
const MAX_HEADERS = 128;

export function parseSip(text: string): ParsedSip {
  const raw = readRaw(text);
  const asRequest = REQUEST_LINE.test(raw.startLine) ? raw : null;
  const invalid = (reason: string): SipInvalid => ({ kind: "invalid", reason, request: asRequest });
  if (!asRequest && !STATUS_LINE.test(raw.startLine)) return invalid("Not a SIP message");
  if (!text.includes("\r\n\r\n")) return invalid("Incomplete message");
  // The checks that need no grammar go first: the grammar's parse is most of a message's cost.
  for (const [name, label] of MANDATORY) {
    if (rawHeader(raw, name) === undefined) return invalid(`Missing ${label}`);
  }
  if (raw.headers.length > MAX_HEADERS) return invalid("Too many headers");

  const head = text.slice(0, text.indexOf("\r\n\r\n"));
  const lines = head.split("\r\n");
  const contactStar = lines.some((line) => CONTACT_STAR.test(line));
  const parseable = contactStar ? `${lines.filter((line) => !CONTACT_STAR.test(line)).join("\r\n")}${text.slice(head.length)}` : text;

  let message: Core.IncomingRequestMessage | Core.IncomingResponseMessage | undefined;
  lastComplaint = "";
  try {
    message = Core.Parser.parseMessage(parseable, parserLogger);
  } catch (err) {
    // The parser dereferences what it failed to parse in a few places (a response's bad CSeq).
    lastComplaint = err instanceof Error ? err.message : String(err);
  }
  if (!message) return invalid(complaintReason(lastComplaint));
  if (!message.viaBranch) return invalid("Missing Via branch");

  if (message instanceof Core.IncomingResponseMessage) {
    const status = message.statusCode ?? 0;
    return { kind: "response", status, method: message.method, cseq: message.cseq, branch: message.viaBranch, message };
  }
  const uri = message.ruri;
  if (!uri) return invalid("Bad Request-URI");
  if (message.method !== cseqMethod(message)) return invalid("CSeq method does not match the request");
  return { kind: "request", method: message.method, uri, raw, message, contactStar };
}

function cseqMethod(message: Core.IncomingMessage): string {
  return (message.getHeader("cseq") ?? "").trim().split(/\s+/)[1] ?? "";
}

function complaintReason(complaint: string): string {
  const header = /error parsing header '([^']+)'/.exec(complaint);
  if (header?.[1]) return `Bad ${header[1]} header`;
  if (complaint.includes("first line")) return "Bad start line";
  return "Malformed message";
}

export interface ResponseOptions {
  reason?: string;
  /** Added to To when the request's To has no tag yet; null adds none (a 100 Trying, §8.2.6.2). */
  toTag: string | null;
  headers?: [string, string][];
  body?: string;
}

/** A response to a request: every Via, From, To (+ tag), Call-ID and CSeq copied as they came. */
export function buildResponse(request: RawMessage, status: number, options: ResponseOptions): string {
  const reason = safeReason(options.reason ?? REASONS[status] ?? "Unknown");
  const lines = [`SIP/2.0 ${status} ${reason}`];
  for (const via of rawHeaders(request, "via")) lines.push(`Via: ${via}`);
  const from = rawHeader(request, "from");
  if (from !== undefined) lines.push(`From: ${from}`);
  const to = rawHeader(request, "to");
  if (to !== undefined) lines.push(`To: ${hasTag(to) || options.toTag === null ? to : `${to};tag=${options.toTag}`}`);
  const callId = rawHeader(request, "call-id");
  if (callId !== undefined) lines.push(`Call-ID: ${callId}`);
  const cseq = rawHeader(request, "cseq");
  if (cseq !== undefined) lines.push(`CSeq: ${cseq}`);
  return finish(lines, options.headers ?? [], options.body ?? "");
}

export interface RequestSpec {
  method: string;
  uri: string;
  headers: [string, string][];
  body?: string;
}

export function buildRequest(spec: RequestSpec): string {
  return finish([`${spec.method} ${spec.uri} SIP/2.0`], spec.headers, spec.body ?? "");
}

function finish(lines: string[], headers: [string, string][], body: string): string {
  for (const [name, value] of headers) lines.push(`${name}: ${value}`);
  lines.push(`Content-Length: ${Buffer.byteLength(body, "utf8")}`);
  return `${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** True when a From/To value carries a tag parameter (outside its `<uri>`). */
export function hasTag(nameAddr: string): boolean {
  const close = nameAddr.lastIndexOf(">");
  return /;\s*tag\s*=/i.test(close === -1 ? nameAddr : nameAddr.slice(close));
}

function safeReason(reason: string): string {
  return reason.replace(/[\r\n]+/g, " ").slice(0, 128);
}

/** Parameters as they go after a URI in a header: `;name=value` or `;name`. */
export function formatParams(params: Record<string, string | null>): string {
  return Object.entries(params)
    .map(([k, v]) => (v === null ? `;${k}` : `;${k}=${v}`))
    .join("");
}

/** The Contact headers of a request, each parsed; sip.js keeps them parsed as it reads them. */
export function contactsOf(request: SipRequest): NameAddr[] {
  return parsedContacts(request.message);
}

/** The URI of a message's first Contact: where requests inside the dialog it makes are sent. */
export function contactUri(message: Core.IncomingMessage): string | undefined {
  return parsedContacts(message)[0]?.uri.toString();
}

function parsedContacts(message: Core.IncomingMessage): NameAddr[] {
  const out: NameAddr[] = [];
  const count = message.getHeaders("contact").length;
  for (let i = 0; i < count; i++) {
    const parsed: unknown = message.headers.Contact?.[i]?.parsed;
    if (parsed instanceof Core.NameAddrHeader) out.push(parsed);
  }
  return out;
}

/** The media type of a message's Content-Type, lower-cased, without parameters ("" without one). */
export function mediaType(message: Core.IncomingMessage): string {
  return (message.getHeader("content-type") ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** The SDP a message carries (an offer or an answer), or null when its body is something else or empty. */
export function sdpBody(message: Core.IncomingMessage): string | null {
  return mediaType(message) === "application/sdp" && message.body.trim() !== "" ? message.body : null;
}

/** A new Via branch: RFC 3261's magic cookie, then enough randomness to be unique. */
export function newBranch(random: { bytes(n: number): Buffer }): string {
  return `${BRANCH_MAGIC}${randomHex(random)}`;
}

/** Hex of `bytes` random bytes, for tags, branches and Call-IDs. */
export function randomHex(random: { bytes(n: number): Buffer }, bytes = 8): string {
  return random.bytes(bytes).toString("hex");
}

export const BRANCH_MAGIC = "z9hG4bK";
