// Admin: webhooks. The account's hooks with their state (an auto-disabled hook says why), create
// and edit, delete after a confirmation, re-enable the auto-disabled ones, and the attempts log
// of every hook or of one.
import { useEffect, useId } from "react";
import { useShallow } from "zustand/react/shallow";
import type { HookKind, Webhook, WebhookRow } from "../../api/admin.js";
import { TextField } from "../../components/TextField.js";
import { useAppStore } from "../../state/context.js";
import { fromGregorianSeconds } from "../../api/gregorian.js";
import { ConfirmDialog } from "./ConfirmDialog.js";
import { DataTable, DocForm, ErrorAlert, RowActions, type Column } from "./parts.js";
import { useDocEditor } from "./use-doc-editor.js";

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "short", timeStyle: "medium" });

/** The notification types a `notifications` hook takes (fidelity.md, Webhooks). */
const NOTIFICATION_TYPES = ["missed_call", "voicemail_new", "voicemail_full", "inbound_fax", "inbound_fax_error", "outbound_fax_error", "register", "deregister"];

const ATTEMPT_COLUMNS: Column[] = ["When", "Webhook", "Event", "Result", "Response", "Reason", { key: "try", label: "Try", numeric: true }];

const NEW_HOOK: Webhook = { name: "", hook: "channel_create", uri: "", http_verb: "post", retries: 2, enabled: true, format: "form-data" };

export function AdminWebhooks() {
  const s = useAppStore(
    useShallow((state) => ({
      webhooks: state.webhooks,
      attempts: state.attempts,
      loadWebhooks: state.loadWebhooks,
      readWebhook: state.readWebhook,
      saveWebhook: state.saveWebhook,
      deleteWebhook: state.deleteWebhook,
      reenableWebhooks: state.reenableWebhooks,
      loadAttempts: state.loadAttempts,
    })),
  );
  const { webhooks, attempts, loadWebhooks, loadAttempts } = s;
  const attemptsFilterId = useId();

  useEffect(() => {
    void loadWebhooks();
    void loadAttempts(null);
  }, [loadWebhooks, loadAttempts]);

  const editor = useDocEditor<WebhookRow, Webhook>({
    name: (row) => row.name ?? row.id,
    open: async (row) => {
      const hook = await s.readWebhook(row.id);
      return typeof hook === "string" ? hook : { title: `Edit ${hook.name}`, draft: hook };
    },
    save: (draft) => s.saveWebhook(draft),
    remove: (row) => s.deleteWebhook(row.id),
    saved: () => void loadAttempts(attempts.hookId),
  });
  const { confirming } = editor;

  const nameOf = (hookId: string | undefined) => webhooks.rows.find((row) => row.id === hookId)?.name ?? hookId ?? "—";
  const disabledCount = webhooks.rows.filter((row) => row.enabled === false && row.disable_reason !== undefined).length;

  return (
    <div>
      <h2 className="section-heading">Webhooks</h2>
      <div className="toolbar">
        <button
          type="button"
          className="button"
          onClick={() => editor.startNew("New webhook", NEW_HOOK)}
        >
          New webhook
        </button>
        <button
          type="button"
          className="button"
          onClick={() => {
            void loadWebhooks();
            void loadAttempts(attempts.hookId);
          }}
        >
          Refresh
        </button>
        <button
          type="button"
          className="button"
          aria-describedby="reenable-hint"
          onClick={() => void s.reenableWebhooks().then(() => loadAttempts(attempts.hookId))}
        >
          Re-enable disabled webhooks
        </button>
        <span id="reenable-hint" className="muted">
          {disabledCount === 0 ? "None is disabled now." : `${disabledCount} disabled after failing.`}
        </span>
      </div>
      <p className="status-text" role="status" aria-live="polite">
        {webhooks.loading ? "Loading webhooks…" : (webhooks.notice ?? "")}
      </p>
      <ErrorAlert message={webhooks.error} />

      <DocForm editor={editor} saveLabel="Save webhook">
        {(open) => <WebhookFields draft={open} kinds={webhooks.kinds} onChange={editor.setDraft} />}
      </DocForm>

      <DataTable caption="Webhooks" columns={["Name", "Event", "Address", "State", "Actions"]} loading={webhooks.loading} rowCount={webhooks.rows.length} emptyText="No webhooks yet.">
        {webhooks.rows.map((row) => {
          const name = row.name ?? row.id;
          return (
            <tr key={row.id} data-webhook-id={row.id} aria-current={attempts.hookId === row.id ? "true" : undefined}>
              <th scope="row">{name}</th>
              <td className="mono">{row.hook ?? "—"}</td>
              <td className="mono">{row.uri ?? "—"}</td>
              <td>
                {row.enabled === false ? (
                  <span className="state-off">{row.disable_reason !== undefined ? `Disabled: ${row.disable_reason}` : "Disabled"}</span>
                ) : (
                  <span className="state-on">Enabled</span>
                )}
              </td>
              <td>
                <RowActions name={name} onEdit={() => void editor.edit(row)} onDelete={() => editor.setConfirming(row)}>
                  <button type="button" className="button button-small" aria-label={`Attempts of ${name}`} onClick={() => void loadAttempts(row.id)}>
                    Attempts
                  </button>
                </RowActions>
              </td>
            </tr>
          );
        })}
      </DataTable>

      <section className="panel" aria-labelledby="attempts-heading">
        <h3 id="attempts-heading" className="section-heading">
          Attempts {attempts.hookId === null ? "of every webhook" : `of ${nameOf(attempts.hookId)}`}
        </h3>
        <div className="toolbar">
          <div className="field">
            <label htmlFor={attemptsFilterId}>Show attempts of</label>
            <select id={attemptsFilterId} value={attempts.hookId ?? ""} onChange={(e) => void loadAttempts(e.target.value === "" ? null : e.target.value)}>
              <option value="">Every webhook</option>
              {webhooks.rows.map((row) => (
                <option key={row.id} value={row.id}>
                  {row.name ?? row.id}
                </option>
              ))}
            </select>
          </div>
          <button type="button" className="button" onClick={() => void loadAttempts(attempts.hookId)}>
            Refresh attempts
          </button>
        </div>
        <ErrorAlert message={attempts.error} />
        <DataTable
          caption="Webhook attempts, newest first"
          columns={ATTEMPT_COLUMNS}
          loading={attempts.loading}
          rowCount={attempts.rows.length}
          emptyText="No attempts logged."
        >
          {attempts.rows.map((attempt, index) => (
            <tr key={`${attempt.hook_id ?? ""}-${attempt.timestamp ?? 0}-${index}`} data-attempt-result={attempt.result}>
              <td>{attempt.timestamp === undefined ? "—" : dateTime.format(fromGregorianSeconds(attempt.timestamp))}</td>
              <td>{nameOf(attempt.hook_id)}</td>
              <td className="mono">{attempt.hook_event ?? "—"}</td>
              <td>{attempt.result === "success" ? <span className="state-on">Success</span> : <span className="state-off">Failure</span>}</td>
              <td className="mono">{attempt.response_code ?? "—"}</td>
              <td>{attempt.reason ?? ""}</td>
              <td className="numeric">
                {attempt.try ?? "—"}
                {attempt.retries_left !== undefined ? <span className="muted"> ({attempt.retries_left} left)</span> : null}
              </td>
            </tr>
          ))}
        </DataTable>
      </section>

      <ConfirmDialog
        open={confirming !== null}
        title="Delete this webhook?"
        message={confirming === null ? "" : `“${confirming.name ?? confirming.id}” will stop receiving events. This cannot be undone.`}
        confirmLabel="Delete webhook"
        busy={editor.deleting}
        onConfirm={() => void editor.confirmDelete()}
        onCancel={() => editor.setConfirming(null)}
      />
    </div>
  );
}

/** A notification type belongs to `notifications` hooks only: on others it would overwrite the payload's `type`. */
function withHook(draft: Webhook, hook: string): Webhook {
  if (hook === "notifications" || draft.custom_data?.type === undefined) return { ...draft, hook };
  const rest = Object.fromEntries(Object.entries(draft.custom_data).filter(([key]) => key !== "type"));
  return { ...draft, hook, custom_data: rest };
}

interface WebhookFieldsProps {
  draft: Webhook;
  kinds: HookKind[];
  onChange(draft: Webhook): void;
}

function WebhookFields({ draft, kinds, onChange }: WebhookFieldsProps) {
  const ids = { hook: useId(), verb: useId(), format: useId(), retries: useId(), type: useId(), enabled: useId() };
  const kindIds = kinds.length > 0 ? kinds.map((k) => k.id) : [draft.hook];
  const notificationType = draft.custom_data?.type ?? "";
  const describe = kinds.find((k) => k.id === draft.hook)?.description;

  return (
    <>
      {draft.disable_reason !== undefined ? <p className="muted">Disabled by the server: {draft.disable_reason}. Saving it enabled runs it again.</p> : null}
      <div className="form-grid">
        <TextField label="Webhook name" name="name" value={draft.name} onChange={(e) => onChange({ ...draft, name: e.target.value })} required />
        <div className="field">
          <label htmlFor={ids.hook}>Event</label>
          <select
            id={ids.hook}
            value={draft.hook}
            aria-describedby={`${ids.hook}-hint`}
            onChange={(e) => onChange(withHook(draft, e.target.value))}
          >
            {kindIds.map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
          <p id={`${ids.hook}-hint`} className="field-hint">
            {describe ?? ""}
          </p>
        </div>
        {draft.hook === "notifications" ? (
          <div className="field">
            <label htmlFor={ids.type}>Notification type</label>
            <select
              id={ids.type}
              value={notificationType}
              onChange={(e) => onChange({ ...draft, custom_data: { ...draft.custom_data, type: e.target.value } })}
            >
              <option value="">Choose…</option>
              {NOTIFICATION_TYPES.map((type) => (
                <option key={type} value={type}>
                  {type}
                </option>
              ))}
            </select>
          </div>
        ) : null}
      </div>
      <TextField
        label="Address to call"
        name="uri"
        type="url"
        inputMode="url"
        spellCheck={false}
        value={draft.uri}
        hint="http:// or https://; the event is sent there."
        onChange={(e) => onChange({ ...draft, uri: e.target.value })}
        required
      />
      <div className="form-grid">
        <div className="field">
          <label htmlFor={ids.verb}>HTTP method</label>
          <select id={ids.verb} value={draft.http_verb} onChange={(e) => onChange({ ...draft, http_verb: e.target.value === "get" ? "get" : "post" })}>
            <option value="post">POST</option>
            <option value="get">GET (payload in the query string)</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.format}>Body format</label>
          <select
            id={ids.format}
            value={draft.format}
            disabled={draft.http_verb === "get"}
            onChange={(e) => onChange({ ...draft, format: e.target.value === "json" ? "json" : "form-data" })}
          >
            <option value="form-data">Form</option>
            <option value="json">JSON</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.retries}>Retries after a failure</label>
          <input
            id={ids.retries}
            type="number"
            min={0}
            max={4}
            value={draft.retries}
            onChange={(e) => onChange({ ...draft, retries: Math.max(0, Math.min(4, Math.round(Number(e.target.value) || 0))) })}
          />
        </div>
      </div>
      <div className="checkbox">
        <input id={ids.enabled} type="checkbox" checked={draft.enabled} onChange={(e) => onChange({ ...draft, enabled: e.target.checked })} />
        <label htmlFor={ids.enabled}>Enabled</label>
      </div>
    </>
  );
}
