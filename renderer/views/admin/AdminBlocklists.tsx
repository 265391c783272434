// Admin: blocklists of caller numbers. Create, edit (numbers one per line; the server keeps them in
// E.164), delete after a confirmation, and choose which lists the account puts in force.
import { useEffect, useId } from "react";
import { useShallow } from "zustand/react/shallow";
import type { Blocklist, BlocklistRow } from "../../api/admin.js";
import { TextField } from "../../components/TextField.js";
import { useAppStore } from "../../state/context.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { DataTable, DocForm, ErrorAlert, RowActions } from "./parts.js";
import { useDocEditor } from "./use-doc-editor.js";

interface Draft {
  id?: string;
  name: string;
  numbers: string;
  blockAnonymous: boolean;
}

const EMPTY_DRAFT: Draft = { name: "", numbers: "", blockAnonymous: false };

/** Numbers typed one per line (or separated by commas) as the API's `numbers` map. */
export function numbersFromText(text: string): Record<string, Record<string, unknown>> {
  const numbers: Record<string, Record<string, unknown>> = {};
  for (const part of text.split(/[\n,;]+/)) {
    const number = part.trim();
    if (number !== "") numbers[number] = {};
  }
  return numbers;
}

function toDraft(list: Blocklist): Draft {
  return {
    ...(list.id === undefined ? {} : { id: list.id }),
    name: list.name,
    numbers: Object.keys(list.numbers).join("\n"),
    blockAnonymous: list.should_block_anonymous,
  };
}

export function AdminBlocklists() {
  const s = useAppStore(
    useShallow((state) => ({
      blocklists: state.blocklists,
      loadBlocklists: state.loadBlocklists,
      readBlocklist: state.readBlocklist,
      saveBlocklist: state.saveBlocklist,
      deleteBlocklist: state.deleteBlocklist,
      setBlocklistApplied: state.setBlocklistApplied,
    })),
  );
  const { blocklists, loadBlocklists } = s;
  const editor = useDocEditor<BlocklistRow, Draft>({
    name: (row) => row.name ?? row.id,
    open: async (row) => {
      const list = await s.readBlocklist(row.id);
      return typeof list === "string" ? list : { title: `Edit ${list.name}`, draft: toDraft(list) };
    },
    save: (draft) =>
      s.saveBlocklist({
        ...(draft.id === undefined ? {} : { id: draft.id }),
        name: draft.name,
        numbers: numbersFromText(draft.numbers),
        should_block_anonymous: draft.blockAnonymous,
      }),
    remove: (row) => s.deleteBlocklist(row.id),
  });
  const { confirming } = editor;

  useEffect(() => void loadBlocklists(), [loadBlocklists]);

  return (
    <div>
      <h2 className="section-heading">Blocklists</h2>
      <p className="view-intro">Calls from the numbers on a list in force are refused. Only lists in force apply.</p>
      <div className="toolbar">
        <button
          type="button"
          className="button"
          onClick={() => editor.startNew("New blocklist", EMPTY_DRAFT)}
        >
          New blocklist
        </button>
        <p className="status-text" role="status" aria-live="polite">
          {blocklists.loading ? "Loading blocklists…" : (blocklists.notice ?? "")}
        </p>
      </div>
      <ErrorAlert message={blocklists.error} />

      <DocForm editor={editor} saveLabel="Save blocklist">
        {(open) => <BlocklistFields draft={open} onChange={editor.setDraft} />}
      </DocForm>

      <DataTable caption="Blocklists" columns={["Name", "In force", "Actions"]} loading={blocklists.loading} rowCount={blocklists.rows.length} emptyText="No blocklists yet.">
        {blocklists.rows.map((row) => {
          const name = row.name ?? row.id;
          const applied = blocklists.applied.includes(row.id);
          return (
            <tr key={row.id} data-blocklist-id={row.id}>
              <th scope="row">{name}</th>
              <td>
                <input
                  type="checkbox"
                  checked={applied}
                  aria-label={`${name} in force`}
                  onChange={(e) => void s.setBlocklistApplied(row.id, e.target.checked)}
                />
              </td>
              <td>
                <RowActions name={name} onEdit={() => void editor.edit(row)} onDelete={() => editor.setConfirming(row)} />
              </td>
            </tr>
          );
        })}
      </DataTable>

      <ConfirmDialog
        open={confirming !== null}
        title="Delete this blocklist?"
        message={confirming === null ? "" : `“${confirming.name ?? confirming.id}” and its numbers will be deleted; its callers get through again.`}
        confirmLabel="Delete blocklist"
        busy={editor.deleting}
        onConfirm={() => void editor.confirmDelete()}
        onCancel={() => editor.setConfirming(null)}
      />
    </div>
  );
}

function BlocklistFields({ draft, onChange }: { draft: Draft; onChange(draft: Draft): void }) {
  const numbersId = useId();
  const anonymousId = useId();
  return (
    <>
      <TextField label="Blocklist name" name="name" value={draft.name} onChange={(e) => onChange({ ...draft, name: e.target.value })} required />
      <div className="field">
        <label htmlFor={numbersId}>Blocked numbers</label>
        <textarea
          id={numbersId}
          name="numbers"
          aria-describedby={`${numbersId}-hint`}
          value={draft.numbers}
          onChange={(e) => onChange({ ...draft, numbers: e.target.value })}
        />
        <p id={`${numbersId}-hint`} className="field-hint">
          One number per line, e.g. +14155550100 or a national number; they are stored in international form.
        </p>
      </div>
      <div className="checkbox">
        <input
          id={anonymousId}
          type="checkbox"
          checked={draft.blockAnonymous}
          onChange={(e) => onChange({ ...draft, blockAnonymous: e.target.checked })}
        />
        <label htmlFor={anonymousId}>Also block callers who hide their number</label>
      </div>
    </>
  );
}
