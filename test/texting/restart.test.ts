// Texting across a restart on the same data directory: a message the carrier had not finished
// with is delivered after the start, and a relay delivery waiting for its retry is sent by the
// next server (persisted before its first try, resumed at the same try).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../server/index.js";
import { TestClock, credentials, DEMO_PASSWORD, localServerConfig } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";
import { RelayReceiver } from "./texting-client.js";

let dataDir: string;
let receiver: RelayReceiver;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "sb-texting-restart-"));
  receiver = await RelayReceiver.start();
});

afterAll(async () => {
  await receiver.close();
  await rm(dataDir, { recursive: true, force: true });
});

function start(clock: TestClock, retryDelayMs: number): Promise<RunningServer> {
  return startServer(localServerConfig(dataDir, { clock, webhookRetryDelayMs: retryDelayMs }));
}

async function json<T>(url: string, init: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  return (await res.json()) as T;
}

describe("texting across a restart", () => {
  it("resumes the carrier's steps and the relay's retries", async () => {
    const clock = new TestClock();
    // A minute between tries: the retry is still waiting when the server stops.
    const first = await start(clock, 60_000);
    const login = await json<{ auth_token: string; data: { account_id: string; owner_id: string } }>(`${first.url}/v2/user_auth`, {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ data: { credentials: credentials("agent1", DEMO_PASSWORD), account_name: "demo" } }),
    });
    const settingsUrl = (server: RunningServer) => `${server.url}/v2/accounts/${login.data.account_id}/users/${login.data.owner_id}/texting`;
    const settings = await json<{ data: { account_uid: string; access_token: string; numbers: string[] } }>(settingsUrl(first), {
      method: "POST",
      headers: { "X-Auth-Token": login.auth_token, "Content-Type": "application/json" },
      body: JSON.stringify({ data: { relay_url: `${receiver.url}/relay` } }),
    });
    receiver.failures = 1;
    const sent = await json<{ messageId: string }>(`${first.url}/texting/api/send`, {
      method: "POST",
      headers: { Authorization: `Bearer ${settings.data.account_uid}:${settings.data.access_token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ to: "+14155557000", from: settings.data.numbers[0], message: "across the restart" }),
    });
    await receiver.waitFor(1);
    // Stopped before its answer is read, an attempt counts for nothing and is sent again at the
    // same try; here the failure is on record first, so the next try is the second.
    await poll("the failed attempt to be logged", async () => {
      const logged = await json<{ data: { result: string }[] }>(`${settingsUrl(first)}/attempts`, { headers: { "X-Auth-Token": login.auth_token } });
      return logged.data.some((a) => a.result === "failure") ? true : undefined;
    });
    await first.close();

    const later = new TestClock();
    later.offsetMs = clock.offsetMs;
    const second = await start(later, 60_000);
    try {
      // The retry is due a minute after the failure, and the carrier's steps are due too.
      later.advance(61_000);
      const [, retried] = await receiver.waitFor(2, 10_000);
      expect(JSON.parse(retried?.body ?? "{}")).toMatchObject({ MessageID: sent.messageId, MessageBody: "across the restart", MessageDirection: "out" });
      const bearer = `Bearer ${settings.data.account_uid}:${settings.data.access_token}`;
      const contacts = await json<{ contacts: { id: string; phoneNumber: string }[] }>(`${second.url}/texting/api/contacts`, { headers: { Authorization: bearer } });
      const contact = contacts.contacts.find((c) => c.phoneNumber === "+14155557000");
      const status = await poll("the message to be delivered", async () => {
        later.advance(1_000);
        const thread = await json<{ messages: { id: string; status: string }[] }>(`${second.url}/texting/api/contacts/${contact?.id}/messages`, { headers: { Authorization: bearer } });
        const message = thread.messages.find((m) => m.id === sent.messageId);
        return message?.status === "delivered" ? message.status : undefined;
      }, 10_000);
      expect(status).toBe("delivered");
      const attempts = await json<{ data: { try: number; result: string }[] }>(`${settingsUrl(second)}/attempts`, { headers: { "X-Auth-Token": login.auth_token } });
      expect(attempts.data.map((a) => [a.try, a.result])).toEqual([
        [2, "success"],
        [1, "failure"],
      ]);
    } finally {
      await second.close();
    }
  });
});
