// Create or edit a texting contact: number (E.164), name, e-mail. The service's own messages
// (a bad number, a duplicate) are shown as they come.
import { useState, type FormEvent } from "react";
import type { TextingContact } from "../../api/texting.js";
import { TextField } from "../../components/TextField.js";
import { useAppStore } from "../../state/context.js";

interface ContactFormProps {
  /** Absent: a new contact. */
  contact?: TextingContact;
  onDone(contactId: string | null): void;
}

export function ContactForm({ contact, onDone }: ContactFormProps) {
  const save = useAppStore((state) => state.saveTextingContact);
  const error = useAppStore((state) => state.texting.contactError);
  const [phoneNumber, setPhoneNumber] = useState(contact?.phoneNumber ?? "");
  const [fullName, setFullName] = useState(contact !== undefined && contact.fullName !== contact.phoneNumber ? contact.fullName : "");
  const [email, setEmail] = useState(contact?.email ?? "");
  const [saving, setSaving] = useState(false);

  async function submit(event: FormEvent): Promise<void> {
    event.preventDefault();
    setSaving(true);
    const id = await save({ phoneNumber, fullName, email }, contact?.id);
    setSaving(false);
    if (id !== null) onDone(id);
  }

  return (
    <form className="card" aria-label={contact === undefined ? "New contact" : "Edit contact"} onSubmit={(event) => void submit(event)}>
      <h2 className="card-heading">{contact === undefined ? "New conversation" : "Edit contact"}</h2>
      {error !== null ? (
        <p className="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <TextField label="Phone number" hint="E.164, for example +14155551234" value={phoneNumber} onChange={(e) => setPhoneNumber(e.target.value)} required autoFocus={contact === undefined} />
      <TextField label="Name" hint="Optional: the number is shown when empty" value={fullName} onChange={(e) => setFullName(e.target.value)} />
      <TextField label="E-mail" type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
      <div className="button-row">
        <button type="submit" className="button button-primary" disabled={saving}>
          {contact === undefined ? "Start conversation" : "Save contact"}
        </button>
        <button type="button" className="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
