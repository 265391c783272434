// The phone line's state: which device the console registered as (a choice when the user has
// several) and whether it is registered, reconnecting or why it is not.
import { useId } from "react";
import { useShallow } from "zustand/react/shallow";
import { useAppStore } from "../state/context.js";
import type { PhoneStatus as Status } from "../state/phone.js";

const LABELS: Record<Status, string> = {
  none: "No phone",
  loading: "Connecting…",
  starting: "Connecting…",
  unregistered: "Not registered",
  registering: "Registering…",
  registered: "Registered",
  reconnecting: "Reconnecting…",
  failed: "Not registered",
};

export function PhoneStatus() {
  const { devices, deviceId, status, error, chooseDevice, retry } = useAppStore(
    useShallow((state) => ({
      devices: state.phone.devices,
      deviceId: state.phone.deviceId,
      status: state.phone.status,
      error: state.phone.error,
      chooseDevice: state.chooseDevice,
      retry: state.retryRegistration,
    })),
  );
  const selectId = useId();
  const device = devices.find((d) => d.id === deviceId);

  return (
    <section className="phone-status card" aria-labelledby={`${selectId}-heading`}>
      <h2 id={`${selectId}-heading`}>Phone</h2>
      <p className={`status-pill status-${status}`} data-testid="registration-state">
        <span className="visually-hidden">Registration: </span>
        {LABELS[status]}
      </p>
      {devices.length > 1 ? (
        <div className="field">
          <label htmlFor={selectId}>Device</label>
          <select id={selectId} value={deviceId ?? ""} onChange={(event) => void chooseDevice(event.target.value)}>
            {devices.map((d) => (
              <option key={d.id} value={d.id}>
                {d.name}
              </option>
            ))}
          </select>
        </div>
      ) : device !== undefined ? (
        <p className="muted">Device: {device.name}</p>
      ) : null}
      {error !== null && status !== "registered" && status !== "reconnecting" ? (
        <div className="form-error">
          <p>{error}</p>
          {status === "failed" ? (
            <button type="button" className="button" onClick={retry}>
              Try again
            </button>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
