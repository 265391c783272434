// Small pieces the recordings, admin and audio views repeat: an error announced as an alert, the
// row a table shows when it has none, and a row's Edit and Delete buttons named after the row.
import type { ReactNode } from "react";

export function ErrorAlert({ message }: { message: string | null }) {
  return message === null ? null : (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

/** The table's only row when it has no other (and is not loading). */
export function EmptyRow({ show, columns, children }: { show: boolean; columns: number; children: ReactNode }) {
  return show ? (
    <tr className="empty-row">
      <td colSpan={columns}>{children}</td>
    </tr>
  ) : null;
}

interface RowActionsProps {
  /** What the row is, for the buttons' accessible names ("Edit Spam callers"). */
  name: string;
  onEdit(): void;
  onDelete(): void;
  /** Buttons between Edit and Delete. */
  children?: ReactNode;
}

export function RowActions({ name, onEdit, onDelete, children }: RowActionsProps) {
  return (
    <div className="inline-actions">
      <button type="button" className="button button-small" aria-label={`Edit ${name}`} onClick={onEdit}>
        Edit
      </button>
      {children}
      <button type="button" className="button button-small button-danger" aria-label={`Delete ${name}`} onClick={onDelete}>
        Delete
      </button>
    </div>
  );
}
