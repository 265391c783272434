// The texting pane: conversations (search, unread counts, opt-out) beside the open thread
// (delivery status per message, compose with Enter and an image), contact create and edit, and
// the integration settings. It tells the slice whether the agent is looking, so texts to the
// open conversation are read as they arrive and the others notify.
import { useEffect, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore, useAppStoreApi } from "../state/context.js";
import { ContactForm } from "./texting/ContactForm.js";
import { ConversationList } from "./texting/ConversationList.js";
import { TextingIntegration } from "./texting/TextingIntegration.js";
import { Thread } from "./texting/Thread.js";
import "./texting/texting.css";

export function Texting() {
  const { status, error, openId, conversations } = useAppStore(
    useShallow((state) => ({ status: state.texting.status, error: state.texting.error, openId: state.texting.openId, conversations: state.texting.conversations })),
  );
  const open = useAppStore((state) => state.openConversation);
  const store = useAppStoreApi();
  const [form, setForm] = useState<"new" | "edit" | null>(null);
  const contact = conversations.find((c) => c.id === openId);

  useEffect(() => {
    const look = (): void => store.getState().setTextingViewing(document.visibilityState === "visible");
    look();
    document.addEventListener("visibilitychange", look);
    return () => {
      document.removeEventListener("visibilitychange", look);
      store.getState().setTextingViewing(false);
    };
  }, [store]);

  return (
    <div>
      <h1>Texting</h1>
      {status === "loading" && conversations.length === 0 ? <p className="muted">Loading your conversations…</p> : null}
      {error !== null ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <div className="texting-view">
        <ConversationList onNew={() => setForm("new")} />
        <div>
          {form === "new" ? (
            <ContactForm
              onDone={(id) => {
                setForm(null);
                if (id !== null) void open(id);
              }}
            />
          ) : null}
          {form === "edit" && contact !== undefined ? <ContactForm contact={contact} onDone={() => setForm(null)} /> : null}
          {form === null && contact !== undefined ? <Thread key={contact.id} contact={contact} onEdit={() => setForm("edit")} /> : null}
          {form === null && contact === undefined ? (
            <section className="card">
              <p className="muted">Choose a conversation, or start a new one.</p>
            </section>
          ) : null}
          <TextingIntegration />
        </div>
      </div>
    </div>
  );
}
