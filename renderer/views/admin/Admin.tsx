// The admin pages, for admins only: devices, blocklists, webhooks and queue membership as tabs
// (arrow keys move between them; the chosen tab is in the address, so a reload keeps it).
import { useEffect, useRef, type KeyboardEvent } from "react";
import { useSearchParams } from "react-router-dom";
import { useShallow } from "zustand/react/shallow";
import { privilegeOf } from "../../state/admin.js";
import { useAppStore } from "../../state/context.js";
import type { AppState } from "../../state/store.js";
import { AdminBlocklists } from "./AdminBlocklists.js";
import { AdminDevices } from "./AdminDevices.js";
import { AdminQueues } from "./AdminQueues.js";
import { AdminWebhooks } from "./AdminWebhooks.js";
import "./views.css";

const TABS = [
  { id: "devices", label: "Devices", Page: AdminDevices },
  { id: "blocklists", label: "Blocklists", Page: AdminBlocklists },
  { id: "webhooks", label: "Webhooks", Page: AdminWebhooks },
  { id: "queues", label: "Queue membership", Page: AdminQueues },
] as const;

type TabId = (typeof TABS)[number]["id"];

/** Whether the navigation lists the admin pages: for admins only. */
export function isAdminView(state: AppState): boolean {
  return privilegeOf(state) === "admin";
}

export function Admin() {
  const { privilege, token, checkPrivilege } = useAppStore(
    useShallow((s) => ({ privilege: privilegeOf(s), token: s.session?.token ?? null, checkPrivilege: s.checkPrivilege })),
  );
  // Where the profile does not tell (not read yet, or failed), ask; again for each new session.
  useEffect(() => void checkPrivilege(), [checkPrivilege, token]);

  if (privilege === "unknown" || privilege === "checking") {
    return (
      <section aria-labelledby="admin-heading">
        <h1 id="admin-heading">Admin</h1>
        <p role="status">Checking your access…</p>
      </section>
    );
  }
  if (privilege !== "admin") {
    return (
      <section aria-labelledby="admin-heading">
        <h1 id="admin-heading">Admin</h1>
        <p className="form-error" role="alert">
          {privilege === "error"
            ? "Your access could not be checked. Reload the page to try again."
            : "The admin pages are for the account's admins. Ask an admin if you need a change."}
        </p>
      </section>
    );
  }
  return <AdminTabs />;
}

function AdminTabs() {
  const [params, setParams] = useSearchParams();
  const wanted = params.get("tab");
  const current: TabId = TABS.some((t) => t.id === wanted) ? (wanted as TabId) : "devices";
  const tabRefs = useRef(new Map<TabId, HTMLButtonElement>());

  function select(id: TabId, focus: boolean) {
    setParams({ tab: id }, { replace: true });
    if (focus) tabRefs.current.get(id)?.focus();
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    const index = TABS.findIndex((t) => t.id === current);
    const step: Record<string, number> = { ArrowRight: 1, ArrowLeft: -1 };
    let next: number | null = null;
    if (event.key in step) next = (index + (step[event.key] ?? 0) + TABS.length) % TABS.length;
    else if (event.key === "Home") next = 0;
    else if (event.key === "End") next = TABS.length - 1;
    const tab = next === null ? undefined : TABS[next];
    if (tab === undefined) return;
    event.preventDefault();
    select(tab.id, true);
  }

  const active = TABS.find((t) => t.id === current) ?? TABS[0];
  const { Page } = active;

  return (
    <section aria-labelledby="admin-heading">
      <h1 id="admin-heading">Admin</h1>
      <div className="tabs" role="tablist" aria-label="Admin pages" onKeyDown={onKeyDown}>
        {TABS.map((tab) => (
          <button
            key={tab.id}
            ref={(element) => {
              if (element === null) tabRefs.current.delete(tab.id);
              else tabRefs.current.set(tab.id, element);
            }}
            type="button"
            role="tab"
            id={`admin-tab-${tab.id}`}
            aria-selected={tab.id === current}
            aria-controls={`admin-panel-${tab.id}`}
            tabIndex={tab.id === current ? 0 : -1}
            onClick={() => select(tab.id, false)}
          >
            {tab.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`admin-panel-${active.id}`} aria-labelledby={`admin-tab-${active.id}`}>
        <Page />
      </div>
    </section>
  );
}
