// What the admin lists that edit documents share: the open form's draft and heading, saving with
// the server's refusal shown, and deleting after a confirmation; and what the admin lists and the
// training scenarios share: opening a row's document for editing (useDocOpener).
import { useRef, useState, type FormEvent } from "react";
import { readOrder } from "../../state/read-order.js";

/** An Edit's document on its way (shown in the form's place), or why it could not be read. */
export interface DocOpening {
  /** What is opened, as its row names it ("Spam callers"). */
  name: string;
  /** Why the read failed; null while it is on its way. */
  error: string | null;
}

/**
 * Opening a row's document for editing. While its read is on its way (up to 1.5 s on a slow link)
 * the form's place says so, and a read that failed says why, with a retry. The documents opened
 * come back in any order on a slow link: only the one opened last opens, and none once a form
 * was opened or closed meanwhile (`settled`; state/read-order).
 */
export function useDocOpener<Row, Doc>(read: (row: Row) => Promise<Doc | string>, opened: (row: Row, doc: Doc) => void) {
  const [opening, setOpening] = useState<(DocOpening & { row: Row }) | null>(null);
  const order = useRef(readOrder()).current;

  async function open(row: Row, name: string): Promise<void> {
    const mine = order.ask();
    setOpening({ row, name, error: null });
    const doc = await read(row);
    if (!order.latest(mine) || !order.land(mine)) return;
    if (typeof doc === "string") {
      setOpening({ row, name, error: doc });
      return;
    }
    setOpening(null);
    opened(row, doc);
  }

  return {
    /** The row whose document is being opened, its name, and why its read failed. */
    opening,
    open,
    /** A form was opened or closed here: no read on its way opens its document any more. */
    settled(): void {
      order.changed();
      setOpening(null);
    },
    /** Reads the document whose read failed again. */
    retryOpen(): void {
      if (opening !== null) void open(opening.row, opening.name);
    },
  };
}

export interface DocEditorOptions<Row extends { id: string }, Draft extends { id?: string }> {
  /** The row's name, as its Edit button says it: what the form's place names while its document is read. */
  name(row: Row): string;
  /** The document behind a row as a draft and the form's heading, or why it cannot be read. */
  open(row: Row): Promise<{ title: string; draft: Draft } | string>;
  /** Saves the draft; null when the server took it, else what it said. */
  save(draft: Draft): Promise<string | null>;
  remove(row: Row): Promise<unknown>;
  /** After a save the server took. */
  saved?(): void;
}

export function useDocEditor<Row extends { id: string }, Draft extends { id?: string }>(options: DocEditorOptions<Row, Draft>) {
  const [draft, setDraft] = useState<Draft | null>(null);
  // The form's heading names what is edited as it was, not as it is being retyped.
  const [formTitle, setFormTitle] = useState("");
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [confirming, setConfirming] = useState<Row | null>(null);
  const [deleting, setDeleting] = useState(false);
  const opener = useDocOpener<Row, { title: string; draft: Draft }>(options.open, (_row, opened) => {
    setFormTitle(opened.title);
    setDraft(opened.draft);
  });

  /** Opens `next` (or closes the form): an Edit's read on its way no longer opens its document. */
  function show(next: Draft | null): void {
    opener.settled();
    setDraft(next);
  }

  function startNew(title: string, empty: Draft): void {
    setFormError(null);
    setFormTitle(title);
    show(empty);
  }

  async function edit(row: Row): Promise<void> {
    setFormError(null);
    // The form in the place gives way to the one being opened, which says it is being read.
    setDraft(null);
    await opener.open(row, options.name(row));
  }

  async function save(event: FormEvent<HTMLFormElement>): Promise<void> {
    event.preventDefault();
    if (draft === null || saving) return;
    setSaving(true);
    const problem = await options.save(draft);
    setSaving(false);
    setFormError(problem);
    if (problem === null) {
      show(null);
      options.saved?.();
    }
  }

  async function confirmDelete(): Promise<void> {
    if (confirming === null) return;
    setDeleting(true);
    await options.remove(confirming);
    setDeleting(false);
    if (draft?.id === confirming.id || opener.opening?.row.id === confirming.id) show(null);
    setConfirming(null);
  }

  return {
    draft,
    setDraft: (next: Draft | null) => (next === null ? show(null) : setDraft(next)),
    formTitle,
    formError,
    saving,
    opening: opener.opening,
    retryOpen: opener.retryOpen,
    cancelOpen: () => show(null),
    confirming,
    setConfirming,
    deleting,
    startNew,
    edit,
    save,
    confirmDelete,
  };
}
