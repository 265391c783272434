// The texting slice: the signed-in user's texting settings, their conversations (one per contact,
// with unread counts and opt-out), the threads read so far, the open conversation, the image
// attached to the next text, and what went wrong. Live through the event websocket
// (`texting.message.*`); new inbound texts the agent is not looking at are handed to listeners
// (the pane's notifier), as call offers are.
import type { StateCreator } from "zustand/vanilla";
import {
  changeTextingSettings,
  createTextingApi,
  messageFromEvent,
  readTextingSettings,
  type ContactInput,
  type ConversationRow,
  type TextingApi,
  type TextingApiOptions,
  type TextingMessage,
  type TextingSettingsView,
} from "../api/texting.js";
import { errorMessage, relayUrlErrorText } from "../api/error-text.js";
import type { Clock } from "../clock.js";
import { readOrder } from "./read-order.js";
import type { AppState } from "./store.js";

export interface TextingAttachment {
  url: string;
  name: string;
}

export interface TextingState {
  status: "idle" | "loading" | "ready" | "error";
  /** Why the texting pane cannot work (no settings, service unreachable); null when it can. */
  error: string | null;
  settings: TextingSettingsView | null;
  /** Most recent first. */
  conversations: ConversationRow[];
  /** Threads read so far, oldest message first, by contact id. */
  threads: Record<string, TextingMessage[]>;
  openId: string | null;
  /** The pane is on screen in a visible page: texts to the open conversation are read as they come. */
  viewing: boolean;
  search: string;
  sending: boolean;
  sendError: string | null;
  attachment: TextingAttachment | null;
  uploading: boolean;
  attachError: string | null;
  contactError: string | null;
  settingsError: string | null;
}

export interface InboundText {
  message: TextingMessage;
  contactName: string;
}

export interface TextingSlice {
  texting: TextingState;
  /** After sign-in: settings, then conversations; listens to texting events from then on. */
  loadTexting(): Promise<void>;
  openConversation(contactId: string | null): Promise<void>;
  setTextingViewing(viewing: boolean): void;
  setTextingSearch(search: string): void;
  /** Sends the text (and the attached image) to the open conversation; true when accepted. */
  sendText(text: string): Promise<boolean>;
  attachTextingImage(image: Blob, name: string): Promise<void>;
  clearTextingAttachment(): void;
  /** Creates (no id) or edits a contact; answers its id, or null with `contactError` set. */
  saveTextingContact(input: ContactInput, id?: string): Promise<string | null>;
  rotateTextingToken(): Promise<void>;
  setTextingRelayUrl(url: string): Promise<boolean>;
  onTextingInbound(listener: (text: InboundText) => void): () => void;
  /** Sign-out: forgets everything. */
  clearTexting(): void;
}

export interface TextingDeps {
  clock: Clock;
  /** The texting API client for some credentials; the HTTP one when absent. */
  textingApi?: (options: TextingApiOptions) => TextingApi;
}

/** How long texts from contacts not yet listed are gathered before the list is read again. */
const REFRESH_DELAY_MS = 300;

/** The slice before sign-in, and after sign-out. */
export const EMPTY_TEXTING: TextingState = {
  status: "idle",
  error: null,
  settings: null,
  conversations: [],
  threads: {},
  openId: null,
  viewing: false,
  search: "",
  sending: false,
  sendError: null,
  attachment: null,
  uploading: false,
  attachError: null,
  contactError: null,
  settingsError: null,
};

/**
 * What the navigation and the window title count: conversations with unread texts, not texts, so
 * a contact who sends five lines in a row is one thing to answer, as the agent works through them.
 */
export function unreadConversations(texting: TextingState): number {
  return texting.conversations.filter((c) => c.unread > 0).length;
}

export const APP_TITLE = "Switchboard";

/** The window title with that count, as mail and chat clients show it in a taskbar: "(2) Switchboard". */
export function windowTitle(unread: number): string {
  return unread > 0 ? `(${unread}) ${APP_TITLE}` : APP_TITLE;
}

/** Conversations with the newest message first; never-texted contacts after, by name. */
function sorted(rows: ConversationRow[]): ConversationRow[] {
  return [...rows].sort((a, b) => (b.lastMessageDate ?? 0) - (a.lastMessageDate ?? 0) || a.fullName.localeCompare(b.fullName));
}

function upsert(thread: TextingMessage[], message: TextingMessage): TextingMessage[] {
  const at = thread.findIndex((m) => m.id === message.id);
  if (at >= 0) return thread.map((m, i) => (i === at ? message : m));
  return [...thread, message].sort((a, b) => a.date - b.date);
}

export function createTextingSlice(deps: TextingDeps): StateCreator<AppState, [], [], TextingSlice> {
  const makeApi = deps.textingApi ?? createTextingApi;
  const listeners = new Set<(text: InboundText) => void>();
  let api: { key: string; client: TextingApi } | null = null;
  let watching: (() => void) | null = null;
  /** Bumped by sign-out, so answers that arrive later change nothing. */
  let generation = 0;
  let cancelRefresh: (() => void) | null = null;
  /** The sign-in's read of the texting settings while it runs: a contact saved before they arrive waits for it. */
  let loading: Promise<void> | null = null;
  /**
   * Reads of the conversation list in order (state/read-order): an answer older than the one
   * already shown is dropped, so a slow first load cannot hide a contact created meanwhile.
   */
  const listOrder = readOrder();

  return (set, get) => {
    const patch = (change: Partial<TextingState>): void => set((state) => ({ texting: { ...state.texting, ...change } }));

    function client(): TextingApi | null {
      const settings = get().texting.settings;
      if (settings === null) return null;
      const baseUrl = get().endpoints.texting;
      const key = `${baseUrl} ${settings.accountUid}:${settings.accessToken}`;
      if (api === null || api.key !== key) api = { key, client: makeApi({ baseUrl, accountUid: settings.accountUid, accessToken: settings.accessToken }) };
      return api.client;
    }

    function platformClient() {
      const session = get().session;
      return session === null ? null : { options: { baseUrl: get().endpoints.api, token: session.token }, session };
    }

    /** Reads the conversation list; false when a newer read already answered (or sign-out came). */
    async function readConversations(extra: Partial<TextingState> = {}): Promise<boolean> {
      const mine = generation;
      const ticket = listOrder.ask();
      const rows = await client()?.conversations();
      if (rows === undefined || mine !== generation) return false;
      if (!listOrder.land(ticket)) {
        patch(extra);
        return true;
      }
      patch({ ...extra, conversations: sorted(rows) });
      return true;
    }

    async function refreshConversations(): Promise<void> {
      await readConversations();
    }

    /** Texts from new contacts come in bursts (a campaign's replies): one read of the list for them all. */
    function refreshConversationsSoon(): void {
      if (cancelRefresh !== null) return;
      cancelRefresh = deps.clock.after(REFRESH_DELAY_MS, () => {
        cancelRefresh = null;
        void refreshConversations().catch(() => undefined);
      });
    }

    async function markRead(contactId: string): Promise<void> {
      patch({ conversations: get().texting.conversations.map((c) => (c.id === contactId ? { ...c, unread: 0 } : c)) });
      await client()?.markRead(contactId).catch(() => undefined);
    }

    function hear(data: Record<string, unknown>): void {
      const session = get().session;
      const event = messageFromEvent(data);
      if (session === null || event.userId !== session.ownerId || get().texting.status !== "ready") return;
      const { message } = event;
      const state = get().texting;
      const contactId = message.conversationId;
      const known = state.conversations.some((c) => c.id === contactId);
      const isNew = !(state.threads[contactId] ?? []).some((m) => m.id === message.id);
      const threads = state.threads[contactId] === undefined ? state.threads : { ...state.threads, [contactId]: upsert(state.threads[contactId] ?? [], message) };
      const arriving = isNew && message.direction === "in" && !message.read;
      const seen = arriving && state.viewing && state.openId === contactId;
      const conversations = known
        ? state.conversations.map((c) =>
            c.id !== contactId
              ? c
              : {
                  ...c,
                  optedOut: event.contactOptedOut,
                  ...(isNew && message.date >= (c.lastMessageDate ?? 0) ? { lastMessage: message.body, lastMessageDate: message.date } : {}),
                  unread: arriving && !seen ? c.unread + 1 : c.unread,
                },
          )
        : state.conversations;
      patch({ threads, conversations: sorted(conversations) });
      if (!known) refreshConversationsSoon();
      if (seen) void markRead(contactId);
      else if (arriving) for (const listener of listeners) listener({ message, contactName: event.contactName || event.contactNumber });
    }

    return {
      texting: EMPTY_TEXTING,

      loadTexting() {
        const platform = platformClient();
        if (platform === null) return Promise.resolve();
        watching ??= get().onPlatformEvent((event) => {
          if (event.routingKey.startsWith("texting.message.")) hear(event.data);
        });
        const mine = generation;
        patch({ status: "loading", error: null });
        const settingsRead = readTextingSettings(platform.options, platform.session.accountId, platform.session.ownerId);
        const tracked = settingsRead.then(
          () => undefined,
          () => undefined,
        );
        loading = tracked;
        return (async () => {
          try {
            const settings = await settingsRead;
            if (mine !== generation) return;
            patch({ settings });
            if (loading === tracked) loading = null;
            if (!(await readConversations({ status: "ready" }))) return;
            const open = get().texting.openId;
            if (open !== null) await get().openConversation(open);
          } catch (error) {
            if (mine === generation) patch({ status: "error", error: `Texting is not available: ${errorMessage(error)}` });
          } finally {
            if (loading === tracked) loading = null;
          }
        })();
      },

      async openConversation(contactId) {
        patch({ openId: contactId, sendError: null, contactError: null });
        if (contactId === null) return;
        const mine = generation;
        try {
          const thread = (await client()?.thread(contactId)) ?? [];
          if (mine !== generation) return;
          // Events that arrived during the read are kept: the thread is the union of both.
          const heard = get().texting.threads[contactId] ?? [];
          patch({ threads: { ...get().texting.threads, [contactId]: heard.reduce(upsert, thread) } });
          if (get().texting.viewing && get().texting.openId === contactId) await markRead(contactId);
        } catch (error) {
          if (mine === generation) patch({ sendError: `Cannot read this conversation: ${errorMessage(error)}` });
        }
      },

      setTextingViewing(viewing) {
        patch({ viewing });
        const { openId, conversations } = get().texting;
        if (viewing && openId !== null && (conversations.find((c) => c.id === openId)?.unread ?? 0) > 0) void markRead(openId);
      },

      setTextingSearch(search) {
        patch({ search });
      },

      async sendText(text) {
        const { openId, conversations, settings, attachment } = get().texting;
        const contact = conversations.find((c) => c.id === openId);
        const from = settings?.numbers[0];
        const api = client();
        if (contact === undefined || api === null) return false;
        if (from === undefined) {
          patch({ sendError: "You have no texting number. Ask an admin to assign you one." });
          return false;
        }
        if (text.trim() === "" && attachment === null) return false;
        patch({ sending: true, sendError: null });
        try {
          await api.send({ to: contact.phoneNumber, from, message: text, media: attachment === null ? [] : [attachment.url] });
          patch({ sending: false, attachment: null });
          return true;
        } catch (error) {
          patch({ sending: false, sendError: errorMessage(error) });
          return false;
        }
      },

      async attachTextingImage(image, name) {
        const api = client();
        if (api === null) return;
        patch({ uploading: true, attachError: null });
        try {
          const url = await api.uploadImage(image);
          patch({ uploading: false, attachment: { url, name } });
        } catch (error) {
          patch({ uploading: false, attachError: errorMessage(error) });
        }
      },

      clearTextingAttachment() {
        patch({ attachment: null, attachError: null });
      },

      async saveTextingContact(input, id) {
        patch({ contactError: null });
        // Saved before the sign-in's load has the settings (a slow link): wait for them, once.
        if (client() === null && loading !== null) await loading;
        const api = client();
        if (api === null) {
          patch({ contactError: get().texting.error ?? "Texting is not available yet. Try again in a moment." });
          return null;
        }
        // Texting a number already in the list opens its conversation.
        const existing = id === undefined ? get().texting.conversations.find((c) => c.phoneNumber === input.phoneNumber.trim()) : undefined;
        if (existing !== undefined) return existing.id;
        try {
          const contact = id === undefined ? await api.createContact(input) : await api.updateContact(id, input);
          await refreshConversations();
          return contact.id;
        } catch (error) {
          patch({ contactError: errorMessage(error) });
          return null;
        }
      },

      async rotateTextingToken() {
        const platform = platformClient();
        if (platform === null) return;
        try {
          const settings = await changeTextingSettings(platform.options, platform.session.accountId, platform.session.ownerId, { action: "rotate" });
          patch({ settings, settingsError: null });
        } catch (error) {
          patch({ settingsError: errorMessage(error) });
        }
      },

      async setTextingRelayUrl(url) {
        const platform = platformClient();
        if (platform === null) return false;
        try {
          const relay = url.trim() === "" ? null : url.trim();
          const settings = await changeTextingSettings(platform.options, platform.session.accountId, platform.session.ownerId, { relay_url: relay });
          patch({ settings, settingsError: null });
          return true;
        } catch (error) {
          patch({ settingsError: relayUrlErrorText(error) });
          return false;
        }
      },

      onTextingInbound(listener) {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },

      clearTexting() {
        generation++;
        api = null;
        loading = null;
        cancelRefresh?.();
        cancelRefresh = null;
        watching?.();
        watching = null;
        set({ texting: EMPTY_TEXTING });
      },
    };
  };
}
