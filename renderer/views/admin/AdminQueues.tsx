// Admin: which recipients (call-queue users) are members of which queues, as a grid of labelled
// checkboxes; each change is one add or remove on /callq_queues/{id}/recipients.
import { useEffect } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../../state/context.js";
import { DataTable, ErrorAlert } from "./parts.js";

export function AdminQueues() {
  const { membership, loadMembership, setMembership } = useAppStore(
    useShallow((s) => ({ membership: s.membership, loadMembership: s.loadMembership, setMembership: s.setMembership })),
  );

  useEffect(() => void loadMembership(), [loadMembership]);

  const { queues, recipients, members, pending } = membership;

  return (
    <div>
      <h2 className="section-heading">Queue membership</h2>
      <p className="view-intro">A recipient is offered a queue's callers only while a member of it. Users become recipients when call queues are enabled for them.</p>
      <div className="toolbar">
        <button type="button" className="button" onClick={() => void loadMembership()}>
          Refresh
        </button>
        <p className="status-text" role="status" aria-live="polite">
          {membership.loading ? "Loading queues…" : pending.length > 0 ? "Saving…" : ""}
        </p>
      </div>
      <ErrorAlert message={membership.error} />
      {queues.length > 0 ? (
        <DataTable
          caption="Queue membership: recipients by queue"
          columns={["Recipient", ...queues.map((queue) => ({ key: queue.id, label: queue.name ?? queue.id }))]}
          loading={membership.loading}
          rowCount={recipients.length}
          emptyText="No users have call queues enabled."
        >
            {recipients.map((recipient) => {
              const who = recipient.name ?? recipient.id;
              return (
                <tr key={recipient.id} data-recipient-id={recipient.id}>
                  <th scope="row">{who}</th>
                  {queues.map((queue) => {
                    const key = `${queue.id}:${recipient.id}`;
                    const member = (members[queue.id] ?? []).includes(recipient.id);
                    return (
                      <td key={queue.id}>
                        <input
                          type="checkbox"
                          checked={member}
                          aria-label={`${who} in ${queue.name ?? queue.id}`}
                          aria-busy={pending.includes(key)}
                          onChange={(e) => void setMembership(queue.id, recipient.id, e.target.checked)}
                        />
                      </td>
                    );
                  })}
                </tr>
              );
            })}
        </DataTable>
      ) : !membership.loading && membership.error === null ? (
        <p>No queues yet.</p>
      ) : null}
    </div>
  );
}
