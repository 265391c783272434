// The texting service: contacts, conversations and messages of each user, sends through the
// simulated carrier, inbound texts (with STOP/START consent), a bus event per message change
// (`texting.message.<id>`) and the relay of every message. The routes and the platform API call it.
import type { Clock } from "../clock.js";
import type { EventBus } from "../events/bus.js";
import type { Collection, Store, StoredDoc } from "../store/index.js";
import { BackgroundWork } from "./background.js";
import { SimulatedCarrier, type CarrierDelays } from "./carrier.js";
import { consentKeyword, contactEmail, contactInput, contactName, CONTACTS_COLLECTION, isOptedOut } from "./contacts.js";
import { contactNotFound, invalidParameter, invalidPhoneNumber, missingParameter, Problems, TextingError } from "./errors.js";
import { TextingMedia } from "./media.js";
import { checkStatusChange, isMessageStatus, type MessageStatus } from "./message-status.js";
import { isE164 } from "./numbers.js";
import { TextingRelay, type RelayPayload } from "./relay.js";
import { TextingSettings, type TextingIdentity } from "./settings.js";

export const MESSAGES_COLLECTION = "texting_messages";
/** Concatenated SMS stop at about this many characters on most carriers. */
export const MAX_MESSAGE_LENGTH = 1600;
export const MAX_MEDIA = 10;
export const MAX_MEDIA_URL_LENGTH = 2048;

export interface TextingOptions {
  store: Store;
  bus: EventBus;
  clock: Clock;
  logger?: { warn(obj: object, msg: string): void };
  /** The relay's retry rule and timeout; the webhooks' settings unless given. */
  relayRetryDelayMs?: number;
  relayTimeoutMs?: number;
  carrierDelays?: CarrierDelays;
}

/** An inbound text as the simulator injects it. */
export interface InboundText {
  from: string;
  to: string;
  body: string;
  media: string[];
}

/** The number an inbound text was sent to belongs to no user of the account. */
export class NotATextingNumber extends Error {
  override name = "NotATextingNumber";
}

export class TextingService {
  readonly settings: TextingSettings;
  readonly carrier: SimulatedCarrier;
  readonly relay: TextingRelay;
  readonly media: TextingMedia;
  readonly #store: Store;
  readonly #bus: EventBus;
  readonly #clock: Clock;
  readonly #background: BackgroundWork;
  #counter = 0;

  private constructor(options: TextingOptions) {
    this.#store = options.store;
    this.#bus = options.bus;
    this.#clock = options.clock;
    this.#background = new BackgroundWork("texting", options.logger);
    this.settings = new TextingSettings(options.store);
    this.media = new TextingMedia(options.store);
    this.relay = new TextingRelay({
      store: options.store,
      clock: options.clock,
      logger: options.logger,
      retryDelayMs: options.relayRetryDelayMs,
      timeoutMs: options.relayTimeoutMs,
    });
    this.carrier = new SimulatedCarrier(options.store, options.clock, (a, m, s, e) => this.#carrierReport(a, m, s, e), options.carrierDelays, options.logger);
  }

  /** Starts the service and resumes what a previous run left: carrier steps and relay deliveries. */
  static async start(options: TextingOptions): Promise<TextingService> {
    const service = new TextingService(options);
    const accounts = await options.store.global("accounts");
    for (const account of accounts.all()) {
      for (const doc of (await service.#messages(account.id)).all()) {
        const status = doc.data.status;
        if (doc.data.via_carrier === true && (status === "queued" || status === "sent")) service.carrier.submit(account.id, doc.id, String(doc.data.to), status);
      }
    }
    await service.relay.resume();
    return service;
  }

  async stop(): Promise<void> {
    await this.carrier.stop();
    await this.relay.stop();
    await this.#background.settled();
  }

  authenticate(authorization: string | undefined): Promise<TextingIdentity | null> {
    return this.settings.authenticate(authorization);
  }

  // ---- contacts

  async createContact(who: TextingIdentity, body: unknown): Promise<StoredDoc> {
    const input = contactInput(body);
    const contacts = await this.#contacts(who.accountId);
    const existing = this.#contactByNumber(contacts, who.userId, input.phoneNumber);
    if (existing) throw new TextingError([`A contact with phoneNumber '${input.phoneNumber}' exists: ${existing.id}`]);
    return contacts.create({ user_id: who.userId, ...input, optedOut: false });
  }

  async updateContact(who: TextingIdentity, id: string, body: unknown): Promise<StoredDoc> {
    const contacts = await this.#contacts(who.accountId);
    const current = this.#ownContact(contacts, who, id);
    const input = contactInput(body);
    const other = this.#contactByNumber(contacts, who.userId, input.phoneNumber);
    if (other && other.id !== id) throw new TextingError([`A contact with phoneNumber '${input.phoneNumber}' exists: ${other.id}`]);
    // The fields are replaced as sent; consent is the contact's own doing and stays.
    const { optedOut, optOutKeyword, optedOutAt } = current.data;
    return contacts.update(id, { user_id: who.userId, ...input, optedOut: optedOut === true, ...(optedOut === true ? { optOutKeyword, optedOutAt } : {}) });
  }

  async contact(who: TextingIdentity, id: string): Promise<StoredDoc> {
    return this.#ownContact(await this.#contacts(who.accountId), who, id);
  }

  /** The user's contacts, most recent conversation first, each with its last message and unread count. */
  async listContacts(who: TextingIdentity, search = ""): Promise<{ contact: StoredDoc; last?: StoredDoc; unread: number }[]> {
    const contacts = (await this.#contacts(who.accountId)).all().filter((c) => c.data.user_id === who.userId);
    const wanted = search.trim().toLowerCase();
    const found = wanted === "" ? contacts : contacts.filter((c) => [contactName(c), String(c.data.phoneNumber), contactEmail(c)].some((s) => s.toLowerCase().includes(wanted)));
    const summary = new Map<string, { last?: StoredDoc; unread: number }>();
    for (const m of (await this.#messages(who.accountId)).all()) {
      if (m.data.user_id !== who.userId) continue;
      const id = String(m.data.contact_id);
      const entry = summary.get(id) ?? { unread: 0 };
      if (!entry.last || orderOf(m) > orderOf(entry.last)) entry.last = m;
      if (m.data.direction === "in" && m.data.read === false) entry.unread++;
      summary.set(id, entry);
    }
    const rows = found.map((contact) => ({ contact, unread: 0, ...summary.get(contact.id) }));
    return rows.sort((a, b) => dateOf(b.last) - dateOf(a.last) || contactName(a.contact).localeCompare(contactName(b.contact)));
  }

  // ---- messages

  /** POST /api/send: checks every parameter, then stores the message and hands it to the carrier. */
  async send(who: TextingIdentity, body: unknown): Promise<StoredDoc> {
    const input = sendInput(body, who);
    const contacts = await this.#contacts(who.accountId);
    // Found or made in one turn, so two first sends to a number make one contact.
    const contact = this.#contactByNumber(contacts, who.userId, input.to) ?? contacts.create({ user_id: who.userId, phoneNumber: input.to, fullName: input.to, optedOut: false });
    const contactDoc = await contact;
    if (input.viaCarrier && isOptedOut(contactDoc)) {
      throw new TextingError([
        `Contact '${input.to}' has opted out (texted ${String(contactDoc.data.optOutKeyword ?? "STOP")}); no messages can be sent to it until it texts START`,
      ]);
    }
    const message = await this.#record(who.accountId, {
      user_id: who.userId,
      contact_id: contactDoc.id,
      direction: "out",
      from: input.from,
      to: input.to,
      body: input.message,
      media: input.media,
      status: input.viaCarrier ? "queued" : "sent",
      via_carrier: input.viaCarrier,
      read: true,
    }, contactDoc);
    if (input.viaCarrier) this.carrier.submit(who.accountId, message.id, input.to);
    return message;
  }

  /** An inbound text from a contact to one of the account's numbers; STOP and START change consent. */
  async receive(accountId: string, text: InboundText): Promise<{ message: StoredDoc; contact: StoredDoc }> {
    const userId = await this.settings.ownerOf(accountId, text.to);
    if (userId === null) throw new NotATextingNumber(`${text.to} is not a texting number of this account`);
    const contacts = await this.#contacts(accountId);
    let contact = await (this.#contactByNumber(contacts, userId, text.from) ??
      contacts.create({ user_id: userId, phoneNumber: text.from, fullName: text.from, optedOut: false }));
    const consent = consentKeyword(text.body);
    if (consent?.kind === "out" && !isOptedOut(contact)) {
      contact = await contacts.update(contact.id, { ...contact.data, optedOut: true, optOutKeyword: consent.keyword, optedOutAt: this.#clock.now() });
    } else if (consent?.kind === "in" && isOptedOut(contact)) {
      const { optOutKeyword: _keyword, optedOutAt: _at, ...rest } = contact.data;
      contact = await contacts.update(contact.id, { ...rest, optedOut: false });
    }
    const message = await this.#record(accountId, {
      user_id: userId,
      contact_id: contact.id,
      direction: "in",
      from: text.from,
      to: text.to,
      body: text.body,
      media: text.media,
      status: "received",
      via_carrier: false,
      read: false,
    }, contact);
    return { message, contact };
  }

  /** One conversation, oldest first. */
  async thread(who: TextingIdentity, contactId: string): Promise<StoredDoc[]> {
    this.#ownContact(await this.#contacts(who.accountId), who, contactId);
    const messages = await this.#messages(who.accountId);
    return messages.sortedBy(orderOf).filter((k) => k.row.data.contact_id === contactId).map((k) => k.row);
  }

  /** Marks the conversation's inbound messages read; answers how many changed. */
  async markRead(who: TextingIdentity, contactId: string): Promise<number> {
    const contact = this.#ownContact(await this.#contacts(who.accountId), who, contactId);
    const messages = await this.#messages(who.accountId);
    const unread = messages.all().filter((m) => m.data.contact_id === contactId && m.data.direction === "in" && m.data.read === false);
    for (const m of unread) this.#publish(who.accountId, "updated", await messages.update(m.id, { ...m.data, read: true }), contact);
    return unread.length;
  }

  async saveImage(who: TextingIdentity, body: unknown, contentType: string | undefined, declaredLength: number): Promise<StoredDoc> {
    return this.media.save(who.accountId, who.userId, body, contentType, declaredLength);
  }

  messages(accountId: string): Promise<Collection> {
    return this.#messages(accountId);
  }

  // ---- inside

  async #record(accountId: string, data: Record<string, unknown>, contact: StoredDoc): Promise<StoredDoc> {
    const at = this.#clock.now();
    const messages = await this.#messages(accountId);
    const doc = await messages.create({ ...data, date: at, pvt_order: `${String(at).padStart(15, "0")}.${String(++this.#counter).padStart(9, "0")}` });
    const event = this.#publish(accountId, "created", doc, contact);
    this.#track(this.relay.relay(accountId, String(doc.data.user_id), relayPayload(doc, contact), event.seq));
    return doc;
  }

  async #carrierReport(accountId: string, messageId: string, status: MessageStatus, error?: string): Promise<void> {
    const messages = await this.#messages(accountId);
    const doc = messages.get(messageId);
    if (!doc) return;
    const from = doc.data.status;
    if (!isMessageStatus(from)) return;
    checkStatusChange(messageId, from, status);
    const updated = await messages.update(messageId, { ...doc.data, status, ...(error === undefined ? {} : { error }) });
    const contact = (await this.#contacts(accountId)).get(String(doc.data.contact_id));
    if (contact) this.#publish(accountId, "updated", updated, contact);
  }

  #publish(accountId: string, name: "created" | "updated", doc: StoredDoc, contact: StoredDoc) {
    return this.#bus.publish({ account_id: accountId, routing_key: `texting.message.${doc.id}`, name, data: messageEventData(doc, contact) });
  }

  #ownContact(contacts: Collection, who: TextingIdentity, id: string): StoredDoc {
    const doc = contacts.get(id);
    if (!doc || doc.data.user_id !== who.userId) throw contactNotFound(id);
    return doc;
  }

  #contactByNumber(contacts: Collection, userId: string, number: string): StoredDoc | undefined {
    return contacts.all().find((c) => c.data.user_id === userId && c.data.phoneNumber === number);
  }

  #contacts(accountId: string): Promise<Collection> {
    return this.#store.account(accountId, CONTACTS_COLLECTION);
  }

  #messages(accountId: string): Promise<Collection> {
    return this.#store.account(accountId, MESSAGES_COLLECTION);
  }

  #track(work: Promise<unknown>): void {
    this.#background.track(work);
  }
}

interface SendInput {
  to: string;
  from: string;
  message: string;
  media: string[];
  viaCarrier: boolean;
}

/** The send body checked, one message per problem. */
function sendInput(body: unknown, who: TextingIdentity): SendInput {
  const problems = new Problems();
  const b = typeof body === "object" && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  for (const field of ["to", "from"] as const) {
    const value = b[field];
    if (value === undefined || value === null || value === "") problems.add(missingParameter(field));
    else if (!isE164(value)) problems.add(invalidPhoneNumber(value));
  }
  if (isE164(b.from) && !who.numbers.includes(b.from)) problems.add(invalidParameter("from", `'${b.from}' is not a number assigned to this user`));
  const media = b.media ?? [];
  const mediaOk = Array.isArray(media) && media.length <= MAX_MEDIA && media.every(isMediaUrl);
  if (!mediaOk) problems.add(invalidParameter("media", `must be an array of at most ${MAX_MEDIA} http(s) URLs`));
  if (b.message === undefined || b.message === null) problems.add(missingParameter("message"));
  else if (typeof b.message !== "string") problems.add(invalidParameter("message", "must be a string"));
  else if (b.message.length > MAX_MESSAGE_LENGTH) problems.add(invalidParameter("message", `longer than ${MAX_MESSAGE_LENGTH} characters`));
  else if (b.message.trim() === "" && mediaOk && (media as unknown[]).length === 0) problems.add(invalidParameter("message", "empty, and there is no media"));
  if (b.sendStatus !== undefined && b.sendStatus !== "sent") problems.add(invalidParameter("sendStatus", "the only value is 'sent'"));
  problems.check();
  return { to: b.to as string, from: b.from as string, message: b.message as string, media: media as string[], viaCarrier: b.sendStatus !== "sent" };
}

export function isMediaUrl(value: unknown): value is string {
  if (typeof value !== "string" || value.length > MAX_MEDIA_URL_LENGTH) return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

function orderOf(doc: StoredDoc): string {
  return typeof doc.data.pvt_order === "string" ? doc.data.pvt_order : "";
}

function dateOf(doc: StoredDoc | undefined): number {
  return typeof doc?.data.date === "number" ? doc.data.date : 0;
}

function mediaOf(doc: StoredDoc): string[] {
  return Array.isArray(doc.data.media) ? doc.data.media.filter((m): m is string => typeof m === "string") : [];
}

/** A message as the texting API shows it (camelCase, as the contact resource). */
export function messageView(doc: StoredDoc): Record<string, unknown> {
  const d = doc.data;
  return {
    id: doc.id,
    conversationId: d.contact_id,
    userId: d.user_id,
    direction: d.direction,
    from: d.from,
    to: d.to,
    message: d.body,
    media: mediaOf(doc),
    status: d.status,
    ...(typeof d.error === "string" ? { error: d.error } : {}),
    read: d.read === true,
    date: d.date,
  };
}

/** The bus event's data (snake_case, as every event's). */
export function messageEventData(doc: StoredDoc, contact: StoredDoc): Record<string, unknown> {
  const d = doc.data;
  return {
    id: doc.id,
    conversation_id: d.contact_id,
    user_id: d.user_id,
    direction: d.direction,
    from: d.from,
    to: d.to,
    body: d.body,
    media: mediaOf(doc),
    status: d.status,
    ...(typeof d.error === "string" ? { error: d.error } : {}),
    read: d.read === true,
    date: d.date,
    contact_name: contactName(contact),
    contact_number: contact.data.phoneNumber,
    contact_opted_out: isOptedOut(contact),
  };
}

export function relayPayload(doc: StoredDoc, contact: StoredDoc): RelayPayload {
  const d = doc.data;
  return {
    MessageID: doc.id,
    ConversationID: contact.id,
    ToNumber: String(d.to),
    FromNumber: String(d.from),
    MessageBody: String(d.body ?? ""),
    MessageDirection: d.direction === "in" ? "in" : "out",
    ServiceUserID: String(d.user_id),
    ContactName: contactName(contact),
    ContactEmail: contactEmail(contact),
    Media: mediaOf(doc),
  };
}
