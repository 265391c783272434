// The serve-mode server (out/main/server.js as a child process) as the hostile SIP tests meet it:
// an admin token for the demo account, fresh devices made over the API, phones on their own sockets.
import { demoGrant, serve, type DemoGrant, type Served, type ServeOptions } from "../helpers/serve.js";
import { hex, SipPhone, SipSocket, type TestDevice } from "../helpers/sip-client.js";

export const REALM = "demo.switchboard.local";

export interface ServedSip {
  served: Served;
  url: string;
  admin: DemoGrant;
  /** A request as the admin; the envelope's data, or an error for any status from 300 up. */
  api<T>(method: string, path: string, data?: unknown): Promise<T>;
  /** A new device of the demo account with fresh SIP credentials (unregistered). */
  device(): Promise<TestDevice>;
  /** A new socket to /sip, closed by stop(). */
  socket(): Promise<SipSocket>;
  /** A phone for `device` on a socket of its own. */
  phone(device: TestDevice): Promise<SipPhone>;
  /** The ids of the account's registered devices. */
  registered(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function serveSip(options: ServeOptions = {}): Promise<ServedSip> {
  const served = await serve(options);
  const sockets: SipSocket[] = [];
  try {
    const admin = await demoGrant(served.url);
    const api = async <T>(method: string, path: string, data?: unknown): Promise<T> => {
      const res = await fetch(`${served.url}${path}`, {
        method,
        headers: { "X-Auth-Token": admin.token, ...(data === undefined ? {} : { "Content-Type": "application/json" }) },
        body: data === undefined ? undefined : JSON.stringify({ data }),
      });
      const text = await res.text();
      if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
      return (JSON.parse(text) as { data: T }).data;
    };
    const socket = async () => {
      const s = await SipSocket.connect(served.url);
      sockets.push(s);
      return s;
    };
    return {
      served,
      url: served.url,
      admin,
      api,
      async device() {
        const username = `sip_${hex(4)}`;
        const password = hex(8);
        const created = await api<{ id: string }>("PUT", `/v2/accounts/${admin.accountId}/devices`, { name: username, sip: { username, password } });
        return { id: created.id, username, password };
      },
      socket,
      async phone(device) {
        return new SipPhone(await socket(), { username: device.username, password: device.password, realm: REALM });
      },
      async registered() {
        const rows = await api<{ device_id: string; registered: boolean }[]>("GET", `/v2/accounts/${admin.accountId}/devices/status`);
        return rows.filter((r) => r.registered).map((r) => r.device_id);
      },
      async stop() {
        await Promise.all(sockets.map((s) => s.close()));
        await served.stop();
      },
    };
  } catch (err) {
    await served.stop();
    throw err;
  }
}
