// Small pieces the recordings, admin and audio views repeat: an error announced as an alert, a
// data table (caption, column headers, the row it shows when it has none), a row's Edit and Delete
// buttons named after the row, the form that edits one document, and the form's place while an
// Edit's document is read.
import { useId, type FormEvent, type ReactNode } from "react";
import type { DocOpening } from "./use-doc-editor.js";

export function ErrorAlert({ message }: { message: string | null }) {
  return message === null ? null : (
    <p className="form-error" role="alert">
      {message}
    </p>
  );
}

/** A column header: its text, or its text with a key and class (numbers align right). */
export type Column = string | { key: string; label: ReactNode; numeric?: boolean };

interface DataTableProps {
  /** For screen readers (the caption is visually hidden). */
  caption: ReactNode;
  columns: readonly Column[];
  loading: boolean;
  /** Rows in the body; with none, and not loading, the table says `emptyText` instead. */
  rowCount: number;
  emptyText: string;
  children: ReactNode;
}

export function DataTable({ caption, columns, loading, rowCount, emptyText, children }: DataTableProps) {
  const captionId = useId();
  // The wrapper scrolls the table sideways in a narrow window, so the page itself never does; it
  // takes focus so the keyboard can scroll it too (a table with no buttons has nothing else).
  return (
    <div className="scroll-x" role="group" aria-labelledby={captionId} tabIndex={0}>
      <table className="data-table" aria-busy={loading}>
        <caption id={captionId} className="visually-hidden">
          {caption}
        </caption>
        <thead>
          <tr>
            {columns.map((column) =>
              typeof column === "string" ? (
                <th key={column} scope="col">
                  {column}
                </th>
              ) : (
                <th key={column.key} scope="col" className={column.numeric === true ? "numeric" : undefined}>
                  {column.label}
                </th>
              ),
            )}
          </tr>
        </thead>
        <tbody>
          {rowCount === 0 && !loading ? (
            <tr className="empty-row">
              <td colSpan={columns.length}>{emptyText}</td>
            </tr>
          ) : null}
          {children}
        </tbody>
      </table>
    </div>
  );
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

/** What DocForm needs of useDocEditor. */
export interface DocFormEditor<Draft> {
  draft: Draft | null;
  /** The form's heading (what is edited, as it was when opened). */
  formTitle: string;
  /** Why the last save failed. */
  formError: string | null;
  saving: boolean;
  /** An Edit's document being read, or whose read failed. */
  opening: DocOpening | null;
  retryOpen(): void;
  cancelOpen(): void;
  save(event: FormEvent<HTMLFormElement>): Promise<void>;
  setDraft(draft: NoInfer<Draft> | null): void;
}

interface DocFormProps<Draft> {
  editor: DocFormEditor<Draft>;
  /** The save button's text ("Save webhook"). */
  saveLabel: string;
  /** The fields for the open draft. */
  children(draft: Draft): ReactNode;
}

/**
 * The form that edits one document (heading, fields, the server's refusal, Save and Cancel) while
 * a draft is open; in its place while an Edit's document is read, that it is (or why it could not
 * be, with a retry).
 */
export function DocForm<Draft>({ editor, saveLabel, children }: DocFormProps<Draft>) {
  const headingId = useId();
  if (editor.draft === null) {
    if (editor.opening !== null) return <DocOpeningPanel opening={editor.opening} retry={editor.retryOpen} cancel={editor.cancelOpen} />;
    return <ErrorAlert message={editor.formError} />;
  }
  return (
    <form className="panel" aria-labelledby={headingId} onSubmit={(e) => void editor.save(e)} noValidate>
      <h3 id={headingId}>{editor.formTitle}</h3>
      {children(editor.draft)}
      <ErrorAlert message={editor.formError} />
      <div className="inline-actions">
        <button type="submit" className="button" aria-disabled={editor.saving}>
          {editor.saving ? "Saving…" : saveLabel}
        </button>
        <button type="button" className="button" onClick={() => editor.setDraft(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

interface DocOpeningPanelProps {
  opening: DocOpening;
  retry(): void;
  cancel(): void;
}

/**
 * The edit form's place while its document is read: the heading the form will have, "Loading…" as
 * the console's other lists say it; when the read failed, why, with Try again and Cancel.
 */
export function DocOpeningPanel({ opening, retry, cancel }: DocOpeningPanelProps) {
  const headingId = useId();
  const reading = opening.error === null;
  return (
    <section className="panel" aria-labelledby={headingId} aria-busy={reading}>
      <h3 id={headingId}>Edit {opening.name}</h3>
      {reading ? (
        <p className="status-text" role="status">
          Loading…
        </p>
      ) : (
        <ErrorAlert message={opening.error} />
      )}
      <div className="inline-actions">
        {reading ? null : (
          <button type="button" className="button" onClick={retry}>
            Try again
          </button>
        )}
        <button type="button" className="button" onClick={cancel}>
          Cancel
        </button>
      </div>
    </section>
  );
}
