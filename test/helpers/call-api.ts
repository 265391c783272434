// A started server whose calls go through fake signalling: every demo device has a fake phone with
// a real werift leg, and the admin is logged in, for tests that drive calls over HTTP.
import { MediaEngine } from "../../server/media/index.js";
import { startApi, type TestApi } from "./api.js";
import { FakeSignalling, type FakePhone } from "./fake-signalling.js";

export interface CallApi {
  api: TestApi;
  signalling: FakeSignalling;
  /** The admin's token. */
  token: string;
  accountId: string;
  /** `/v2/accounts/{account_id}`. */
  base: string;
  /** The phone registered as a demo user's softphone (by SIP username). */
  phone(username: string): FakePhone;
  close(): Promise<void>;
}

export async function startCallApi(): Promise<CallApi> {
  const media = new MediaEngine();
  const signalling = new FakeSignalling(media);
  const api = await startApi({ config: { callSignalling: signalling } });
  const { token, accountId } = await api.login("admin");
  const base = `/v2/accounts/${accountId}`;
  const phones = new Map<string, FakePhone>();
  const devices = await api.call<{ id: string; username: string }[]>("GET", `${base}/devices`, { token });
  for (const d of devices.body.data) phones.set(d.username, signalling.phone({ accountId, deviceId: d.id }, d.username));
  return {
    api,
    signalling,
    token,
    accountId,
    base,
    phone(username) {
      const found = phones.get(username);
      if (!found) throw new Error(`no phone for ${username}`);
      return found;
    },
    async close() {
      await api.close();
      await media.close();
    },
  };
}
