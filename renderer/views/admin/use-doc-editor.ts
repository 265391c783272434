// What the admin lists that edit documents share: the open form's draft and heading, saving with
// the server's refusal shown, and deleting after a confirmation.
import { useState, type FormEvent } from "react";

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

  function startNew(title: string, empty: Draft): void {
    setFormError(null);
    setFormTitle(title);
    setDraft(empty);
  }

  async function edit(row: Row): Promise<void> {
    setFormError(null);
    const opened = await options.open(row);
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
      setDraft(null);
      options.saved?.();
    }
  }

  async function confirmDelete(): Promise<void> {
    if (confirming === null) return;
    setDeleting(true);
    await options.remove(confirming);
    setDeleting(false);
    if (draft?.id === confirming.id) setDraft(null);
    setConfirming(null);
  }

  return { draft, setDraft, formTitle, formError, saving, confirming, setConfirming, deleting, startNew, edit, save, confirmDelete };
}
