// The conversations: search by name, number or e-mail, one row per contact with its last text,
// unread count and opt-out, newest first; "New conversation" opens the contact form.
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../../state/context.js";
import { timeOf } from "./time.js";

export function ConversationList({ onNew }: { onNew(): void }) {
  const { conversations, openId, search, loading } = useAppStore(
    useShallow((state) => ({ conversations: state.texting.conversations, openId: state.texting.openId, search: state.texting.search, loading: state.texting.status === "loading" })),
  );
  const setSearch = useAppStore((state) => state.setTextingSearch);
  const open = useAppStore((state) => state.openConversation);
  const wanted = search.trim().toLowerCase();
  const shown = wanted === "" ? conversations : conversations.filter((c) => [c.fullName, c.phoneNumber, c.email].some((s) => s.toLowerCase().includes(wanted)));

  return (
    <section className="card conversation-list" aria-labelledby="conversations-heading" aria-busy={loading}>
      <h2 id="conversations-heading" className="card-heading">
        Conversations
      </h2>
      <div className="field">
        <label htmlFor="texting-search">Search conversations</label>
        <input id="texting-search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="Name, number or e-mail" />
      </div>
      <p>
        <button type="button" className="button" onClick={onNew}>
          New conversation
        </button>
      </p>
      {shown.length === 0 ? <p className="muted">{conversations.length === 0 ? "No conversations yet." : "No conversation matches."}</p> : null}
      <ul>
        {shown.map((c) => (
          <li key={c.id}>
            <button type="button" className="conversation-item" aria-current={c.id === openId} onClick={() => void open(c.id)}>
              <span className="conversation-name">{c.fullName}</span>
              <span className="conversation-badges">
                {c.optedOut ? <span className="opt-out-badge">Opted out</span> : null}
                {c.unread > 0 ? <span className="unread-badge">{`${c.unread} unread`}</span> : null}
                {c.lastMessageDate !== null ? <span className="muted">{timeOf(c.lastMessageDate)}</span> : null}
              </span>
              <span className="conversation-snippet">{c.fullName !== c.phoneNumber ? `${c.phoneNumber} · ` : ""}{c.lastMessage === "" ? "Picture" : (c.lastMessage ?? "No messages yet")}</span>
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
