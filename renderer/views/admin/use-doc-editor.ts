// What the admin lists that edit documents share: the open form's draft and heading, saving with
// the server's refusal shown, and deleting after a confirmation.
import { useRef, useState, type FormEvent } from "react";
import { readOrder } from "../../state/read-order.js";

export interface DocEditorOptions<Row extends { id: string }, Draft extends { id?: string }> {
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
  // The documents opened for editing come back in any order on a slow link: only the one opened
  // last opens, and none once the form was started anew or closed meanwhile (state/read-order).
  const opens = useRef(readOrder()).current;

  /** Opens `next` (or closes the form): an Edit's read on its way no longer opens its document. */
  function show(next: Draft | null): void {
    opens.changed();
    setDraft(next);
  }

  function startNew(title: string, empty: Draft): void {
    setFormError(null);
    setFormTitle(title);
    show(empty);
  }

  async function edit(row: Row): Promise<void> {
    setFormError(null);
    const mine = opens.ask();
    const opened = await options.open(row);
    if (!opens.latest(mine) || !opens.land(mine)) return;
    if (typeof opened === "string") setFormError(opened);
    else {
      setFormTitle(opened.title);
      setDraft(opened.draft);
    }
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
    if (draft?.id === confirming.id) show(null);
    setConfirming(null);
  }

  return { draft, setDraft: (next: Draft | null) => (next === null ? show(null) : setDraft(next)), formTitle, formError, saving, confirming, setConfirming, deleting, startNew, edit, save, confirmDelete };
}
