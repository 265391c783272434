// The texting calls the console makes: the user's texting settings through /v2 (platform token),
// and the texting API itself ({texting_url}/api/..., Bearer `<account_uid>:<access_token>`) for
// conversations, sends, contacts and image uploads. Answers are checked and reduced to the fields
// the pane uses; failures carry the API's own `errors` messages.
import { ApiClient, isRecord, type ApiClientOptions } from "./client.js";

export interface TextingSettingsView {
  accountUid: string;
  accessToken: string;
  numbers: string[];
  relayUrl: string | null;
}

export interface TextingContact {
  id: string;
  phoneNumber: string;
  fullName: string;
  email: string;
  optedOut: boolean;
  /** The opt-out word the contact texted (STOP, QUIT ...), when opted out. */
  optOutKeyword: string;
}

export interface ConversationRow extends TextingContact {
  lastMessage: string | null;
  /** Epoch ms; null for a contact never texted. */
  lastMessageDate: number | null;
  unread: number;
}

export type TextingStatus = "queued" | "sent" | "delivered" | "failed" | "received";

export interface TextingMessage {
  id: string;
  conversationId: string;
  direction: "in" | "out";
  from: string;
  to: string;
  body: string;
  media: string[];
  status: TextingStatus;
  error: string;
  read: boolean;
  /** Epoch ms. */
  date: number;
}

export interface ContactInput {
  phoneNumber: string;
  fullName: string;
  email: string;
}

/** A texting API failure: its messages as the API wrote them, or why there was no answer. */
export class TextingRequestError extends Error {
  override readonly name = "TextingRequestError";

  constructor(
    /** HTTP status, 0 when there was no answer. */
    readonly status: number,
    readonly errors: readonly string[],
  ) {
    super(errors.join(" "));
  }
}

export interface TextingApi {
  conversations(): Promise<ConversationRow[]>;
  thread(contactId: string): Promise<TextingMessage[]>;
  markRead(contactId: string): Promise<void>;
  send(request: { to: string; from: string; message: string; media: string[] }): Promise<string>;
  createContact(input: ContactInput): Promise<TextingContact>;
  updateContact(id: string, input: ContactInput): Promise<TextingContact>;
  /** Uploads an image; answers the URL it is served at. */
  uploadImage(image: Blob): Promise<string>;
}

export interface TextingApiOptions {
  /** {texting_url}, without a trailing slash. */
  baseUrl: string;
  accountUid: string;
  accessToken: string;
  fetch?: (input: string, init: RequestInit) => Promise<Response>;
}

export function createTextingApi(options: TextingApiOptions): TextingApi {
  const base = `${options.baseUrl.replace(/\/+$/, "")}/api`;
  const doFetch = options.fetch ?? ((input: string, init: RequestInit) => fetch(input, init));
  const authorization = `Bearer ${options.accountUid}:${options.accessToken}`;

  async function call(method: "GET" | "POST", path: string, body?: unknown, contentType = "application/json"): Promise<Record<string, unknown>> {
    const headers: Record<string, string> = { Authorization: authorization, Accept: "application/json" };
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      headers["Content-Type"] = contentType;
      init.body = body instanceof Blob ? body : JSON.stringify(body);
    }
    let response: Response;
    try {
      response = await doFetch(base + path, init);
    } catch {
      throw new TextingRequestError(0, [`Cannot reach the texting service at ${options.baseUrl}.`]);
    }
    const text = await response.text().catch(() => "");
    let parsed: unknown = null;
    try {
      parsed = text === "" ? {} : (JSON.parse(text) as unknown);
    } catch {
      parsed = null;
    }
    if (!response.ok) {
      const errors = isRecord(parsed) && Array.isArray(parsed["errors"]) ? parsed["errors"].map(String) : [`The texting service answered ${response.status}.`];
      throw new TextingRequestError(response.status, errors);
    }
    if (!isRecord(parsed)) throw new TextingRequestError(response.status, ["The texting service gave an answer the console does not understand."]);
    return parsed;
  }

  const id = (contactId: string) => `/contacts/${encodeURIComponent(contactId)}`;

  return {
    async conversations() {
      const answer = await call("GET", "/contacts");
      const rows = Array.isArray(answer["contacts"]) ? answer["contacts"] : [];
      return rows.filter(isRecord).map(conversationRow);
    },
    async thread(contactId) {
      const answer = await call("GET", `${id(contactId)}/messages`);
      const rows = Array.isArray(answer["messages"]) ? answer["messages"] : [];
      return rows.filter(isRecord).map(messageFromApi);
    },
    async markRead(contactId) {
      await call("POST", `${id(contactId)}/read`);
    },
    async send(request) {
      const answer = await call("POST", "/send", request);
      return typeof answer["messageId"] === "string" ? answer["messageId"] : "";
    },
    async createContact(input) {
      return contactFrom(await call("POST", "/contacts", contactBody(input)));
    },
    async updateContact(contactId, input) {
      return contactFrom(await call("POST", id(contactId), contactBody(input)));
    },
    async uploadImage(image) {
      const answer = await call("POST", "/media", image, image.type || "application/octet-stream");
      if (typeof answer["url"] !== "string") throw new TextingRequestError(200, ["The upload answered without a URL."]);
      return answer["url"];
    },
  };
}

/** GET /v2/accounts/{a}/users/{u}/texting, and POST to it (rotate, relay_url). */
export async function readTextingSettings(client: ApiClientOptions, accountId: string, userId: string): Promise<TextingSettingsView> {
  const envelope = await new ApiClient(client).request<unknown>("GET", settingsPath(accountId, userId));
  return settingsFrom(envelope.data);
}

export async function changeTextingSettings(
  client: ApiClientOptions,
  accountId: string,
  userId: string,
  change: { action: "rotate" } | { relay_url: string | null },
): Promise<TextingSettingsView> {
  const envelope = await new ApiClient(client).request<unknown>("POST", settingsPath(accountId, userId), { body: change });
  return settingsFrom(envelope.data);
}

function settingsPath(accountId: string, userId: string): string {
  return `/v2/accounts/${encodeURIComponent(accountId)}/users/${encodeURIComponent(userId)}/texting`;
}

function settingsFrom(data: unknown): TextingSettingsView {
  const d = isRecord(data) ? data : {};
  return {
    accountUid: text(d["account_uid"]),
    accessToken: text(d["access_token"]),
    numbers: Array.isArray(d["numbers"]) ? d["numbers"].filter((n): n is string => typeof n === "string") : [],
    relayUrl: typeof d["relay_url"] === "string" && d["relay_url"] !== "" ? d["relay_url"] : null,
  };
}

function contactBody(input: ContactInput): Record<string, string> {
  return {
    phoneNumber: input.phoneNumber.trim(),
    ...(input.fullName.trim() === "" ? {} : { fullName: input.fullName.trim() }),
    ...(input.email.trim() === "" ? {} : { email: input.email.trim() }),
  };
}

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

function contactFrom(d: Record<string, unknown>): TextingContact {
  return {
    id: text(d["id"]),
    phoneNumber: text(d["phoneNumber"]),
    fullName: text(d["fullName"]) || text(d["phoneNumber"]),
    email: text(d["email"]),
    optedOut: d["optedOut"] === true,
    optOutKeyword: text(d["optOutKeyword"]),
  };
}

function conversationRow(d: Record<string, unknown>): ConversationRow {
  return {
    ...contactFrom(d),
    lastMessage: typeof d["last_message"] === "string" ? d["last_message"] : null,
    lastMessageDate: typeof d["last_message_date"] === "number" ? d["last_message_date"] : null,
    unread: typeof d["unread"] === "number" ? d["unread"] : 0,
  };
}

const STATUSES: readonly TextingStatus[] = ["queued", "sent", "delivered", "failed", "received"];

function statusOf(value: unknown): TextingStatus {
  return STATUSES.find((s) => s === value) ?? "sent";
}

function mediaOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((m): m is string => typeof m === "string") : [];
}

/** A message from the API (camelCase: conversationId, message) or an event (snake_case: conversation_id, body). */
function messageOf(d: Record<string, unknown>, names: { conversation: string; body: string }): TextingMessage {
  return {
    id: text(d["id"]),
    conversationId: text(d[names.conversation]),
    direction: d["direction"] === "in" ? "in" : "out",
    from: text(d["from"]),
    to: text(d["to"]),
    body: text(d[names.body]),
    media: mediaOf(d["media"]),
    status: statusOf(d["status"]),
    error: text(d["error"]),
    read: d["read"] === true,
    date: typeof d["date"] === "number" ? d["date"] : 0,
  };
}

function messageFromApi(d: Record<string, unknown>): TextingMessage {
  return messageOf(d, { conversation: "conversationId", body: "message" });
}

/** The message a `texting.message.<id>` event carries (snake_case), and what it says of the contact. */
export function messageFromEvent(d: Record<string, unknown>): { message: TextingMessage; userId: string; contactName: string; contactNumber: string; contactOptedOut: boolean } {
  return {
    message: messageOf(d, { conversation: "conversation_id", body: "body" }),
    userId: text(d["user_id"]),
    contactName: text(d["contact_name"]),
    contactNumber: text(d["contact_number"]),
    contactOptedOut: d["contact_opted_out"] === true,
  };
}
