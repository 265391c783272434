// One conversation: the contact (with Edit), a clear banner when they opted out, the messages
// with each outbound text's delivery status, and the compose box (Enter sends, Shift+Enter is a
// new line, an image can be attached).
import { useEffect, useRef, useState, type ChangeEvent, type KeyboardEvent } from "react";
import { useShallow } from "zustand/react/shallow";
import type { ConversationRow, TextingMessage } from "../../api/texting.js";
import { useAppStore } from "../../state/context.js";
import { timeOf } from "./time.js";

const STATUS_LABEL: Record<TextingMessage["status"], string> = {
  queued: "Queued",
  sent: "Sent",
  delivered: "Delivered",
  failed: "Failed",
  received: "Received",
};

function Bubble({ message, contact }: { message: TextingMessage; contact: ConversationRow }) {
  const failed = message.status === "failed";
  const className = `bubble ${message.direction === "in" ? "bubble-in" : "bubble-out"}${failed ? " bubble-failed" : ""}`;
  return (
    <li className={className} data-message-id={message.id} data-status={message.status}>
      {message.media.map((url) => (
        <a key={url} href={url} target="_blank" rel="noreferrer">
          <img src={url} alt={message.direction === "in" ? `Picture from ${contact.fullName}` : "Picture you sent"} />
        </a>
      ))}
      {message.body !== "" ? <span className="bubble-text">{message.body}</span> : null}
      <span className="bubble-meta">
        {timeOf(message.date)}
        {message.direction === "out" ? (
          <>
            {" · "}
            <span className="delivery-status">{failed && message.error !== "" ? `Failed: ${message.error}` : STATUS_LABEL[message.status]}</span>
          </>
        ) : null}
      </span>
    </li>
  );
}

export function Thread({ contact, onEdit }: { contact: ConversationRow; onEdit(): void }) {
  const { thread, sending, sendError, attachment, uploading, attachError, numbers } = useAppStore(
    useShallow((state) => ({
      thread: state.texting.threads[contact.id],
      sending: state.texting.sending,
      sendError: state.texting.sendError,
      attachment: state.texting.attachment,
      uploading: state.texting.uploading,
      attachError: state.texting.attachError,
      numbers: state.texting.settings?.numbers ?? [],
    })),
  );
  const sendText = useAppStore((state) => state.sendText);
  const attach = useAppStore((state) => state.attachTextingImage);
  const clearAttachment = useAppStore((state) => state.clearTextingAttachment);
  const [draft, setDraft] = useState("");
  const fileInput = useRef<HTMLInputElement>(null);
  const end = useRef<HTMLLIElement>(null);

  useEffect(() => {
    end.current?.scrollIntoView({ block: "end" });
  }, [thread?.length]);

  async function send(): Promise<void> {
    if (sending || uploading) return;
    if (await sendText(draft)) setDraft("");
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>): void {
    if (event.key !== "Enter" || event.shiftKey || event.nativeEvent.isComposing) return;
    event.preventDefault();
    void send();
  }

  function onFile(event: ChangeEvent<HTMLInputElement>): void {
    const file = event.target.files?.[0];
    event.target.value = "";
    if (file !== undefined) void attach(file, file.name);
  }

  return (
    <section className="card thread" aria-labelledby="thread-heading">
      <div className="thread-header">
        <div>
          <h2 id="thread-heading" className="card-heading">
            {contact.fullName}
          </h2>
          <p className="muted">
            {contact.phoneNumber}
            {contact.email !== "" ? ` · ${contact.email}` : ""}
            {numbers[0] !== undefined ? ` · from your number ${numbers[0]}` : ""}
          </p>
        </div>
        <button type="button" className="button button-small" onClick={onEdit}>
          Edit contact
        </button>
      </div>
      {contact.optedOut ? (
        <p className="form-error" role="status">
          <strong>Opted out.</strong> {contact.fullName} texted {contact.optOutKeyword || "STOP"}: you cannot text them until they text START.
        </p>
      ) : null}
      {/* The log is a wrapper: as the list's own role it would take the list semantics away from the texts. */}
      <div role="log" aria-live="polite" aria-label={`Messages with ${contact.fullName}`}>
        <ol className="thread-messages">
          {thread === undefined ? <li className="muted">Loading…</li> : null}
          {thread?.length === 0 ? <li className="muted">No messages yet. Say hello.</li> : null}
          {thread?.map((message) => <Bubble key={message.id} message={message} contact={contact} />)}
          <li ref={end} aria-hidden="true" />
        </ol>
      </div>
      <form
        className="compose"
        aria-label="Send a text"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        {sendError !== null ? (
          <p className="form-error" role="alert">
            {sendError}
          </p>
        ) : null}
        {attachError !== null ? (
          <p className="form-error" role="alert">
            {attachError}
          </p>
        ) : null}
        {attachment !== null ? (
          <p className="attachment-chip">
            <img src={attachment.url} alt={`Attached: ${attachment.name}`} />
            <span>{attachment.name}</span>
            <button type="button" className="button button-small" onClick={clearAttachment}>
              Remove image
            </button>
          </p>
        ) : null}
        <label htmlFor="texting-draft" className="visually-hidden">
          Message
        </label>
        <textarea
          id="texting-draft"
          value={draft}
          disabled={contact.optedOut}
          placeholder={contact.optedOut ? "This contact opted out" : "Type a text; Enter sends, Shift+Enter for a new line"}
          onChange={(e) => setDraft(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <div className="button-row">
          <button type="submit" className="button button-primary" disabled={contact.optedOut || sending || uploading}>
            {sending ? "Sending…" : "Send"}
          </button>
          <button type="button" className="button" disabled={contact.optedOut || uploading} onClick={() => fileInput.current?.click()}>
            {uploading ? "Attaching…" : "Attach image"}
          </button>
          <input ref={fileInput} type="file" accept="image/jpeg,image/png,image/gif,image/webp" hidden aria-label="Image to attach" onChange={onFile} />
        </div>
      </form>
    </section>
  );
}
