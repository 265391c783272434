// Admin: the account's devices with their registration state (read again every few seconds while
// the page is open) and Sync, which asks a registered phone to re-read its configuration.
import { useEffect } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../../state/context.js";
import { DataTable, ErrorAlert } from "./parts.js";

const timeOfDay = new Intl.DateTimeFormat(undefined, { timeStyle: "medium" });

const SYNC_TEXT = { sending: "Sending sync…", sent: "Sync sent", failed: "Sync failed" } as const;

export function AdminDevices() {
  const { devices, loadDevices, watchRegistrations, syncDevice } = useAppStore(
    useShallow((s) => ({ devices: s.devices, loadDevices: s.loadDevices, watchRegistrations: s.watchRegistrations, syncDevice: s.syncDevice })),
  );

  useEffect(() => {
    void loadDevices();
    return watchRegistrations();
  }, [loadDevices, watchRegistrations]);

  const registeredCount = devices.rows.filter((d) => devices.registered[d.id] === true).length;

  return (
    <div>
      <h2 className="section-heading">Devices</h2>
      <div className="toolbar">
        <button type="button" className="button" onClick={() => void loadDevices()}>
          Refresh
        </button>
        <p className="status-text" role="status" aria-live="polite">
          {devices.loading
            ? "Loading devices…"
            : devices.checkedAt === null
              ? ""
              : `${registeredCount} of ${devices.rows.length} registered, checked at ${timeOfDay.format(devices.checkedAt)}.`}
        </p>
      </div>
      <ErrorAlert message={devices.error} />
      <DataTable
        caption="Devices and their registration"
        columns={["Name", "Type", "Owner", "SIP username", "Registration", "Actions"]}
        loading={devices.loading}
        rowCount={devices.rows.length}
        emptyText="No devices."
      >
          {devices.rows.map((device) => {
            const name = device.name ?? device.id;
            const registered = devices.registered[device.id] === true;
            const sync = devices.sync[device.id];
            return (
              <tr key={device.id} data-device-id={device.id}>
                <th scope="row">{name}</th>
                <td>{device.device_type ?? "—"}</td>
                <td>{device.owner_id ? (devices.owners[device.owner_id] ?? device.owner_id) : "—"}</td>
                <td className="mono">{device.username ?? "—"}</td>
                <td>
                  <span className={registered ? "state-on" : "state-off"}>{registered ? "Registered" : "Not registered"}</span>
                  {device.enabled === false ? <span className="muted"> (disabled)</span> : null}
                </td>
                <td>
                  <div className="inline-actions">
                    <button
                      type="button"
                      className="button button-small"
                      aria-label={`Sync ${name}`}
                      aria-describedby={`sync-hint-${device.id}`}
                      aria-disabled={sync === "sending"}
                      onClick={() => (sync === "sending" ? undefined : void syncDevice(device.id))}
                    >
                      Sync
                    </button>
                    <span id={`sync-hint-${device.id}`} className="muted" role="status">
                      {sync !== undefined ? SYNC_TEXT[sync] : registered ? "" : "Not registered: nothing to sync"}
                    </span>
                  </div>
                </td>
              </tr>
            );
          })}
      </DataTable>
    </div>
  );
}
