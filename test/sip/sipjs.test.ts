// Interop with the console's own user agent: sip.js (as the renderer uses it) registers with
// digest over /sip, receives check-sync, and unregisters, each visible in /devices/status.
import { afterAll, beforeAll, expect, it } from "vitest";
import WebSocket from "ws";
import { Registerer, RegistererState, UserAgent } from "sip.js";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
const globals = globalThis as { WebSocket?: unknown };
const nodeWebSocket = globals.WebSocket;

beforeAll(async () => {
  api = await startApi();
  // sip.js's transport uses the browser's WebSocket, which Node 20 lacks.
  globals.WebSocket = WebSocket;
});
afterAll(async () => {
  globals.WebSocket = nodeWebSocket;
  await api.close();
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

it("a sip.js user agent registers as agent1's softphone, gets check-sync, and unregisters", async () => {
  const { token, accountId } = await api.login("admin");
  const devices = (await api.server.store.account(accountId, "devices")).all();
  const softphone = devices.find((d) => (d.data.sip as { username?: string } | undefined)?.username === "agent1");
  const sip = softphone?.data.sip as { username: string; password: string };
  const status = async () =>
    (await api.call<{ device_id: string }[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token })).body.data.map((r) => r.device_id);

  const events: string[] = [];
  const ua = new UserAgent({
    uri: UserAgent.makeURI("sip:agent1@demo.switchboard.local"),
    authorizationUsername: sip.username,
    authorizationPassword: sip.password,
    transportOptions: { server: `${api.url.replace(/^http/, "ws")}/sip` },
    logConfiguration: false,
    logLevel: "error",
    delegate: {
      onNotify: (notification) => {
        events.push(notification.request.getHeader("Event") ?? "");
        void notification.accept();
      },
    },
  });
  await ua.start();
  const registerer = new Registerer(ua, { expires: 300 });
  try {
    await registerer.register();
    await until(() => registerer.state === RegistererState.Registered, "registered");
    expect(await status()).toEqual([softphone?.id]);

    expect((await api.call("POST", `/v2/accounts/${accountId}/devices/${softphone?.id ?? ""}/sync`, { token })).status).toBe(202);
    await until(() => events.length > 0, "NOTIFY delivered");
    expect(events).toEqual(["check-sync"]);

    await registerer.unregister();
    await until(() => registerer.state === RegistererState.Unregistered, "unregistered");
    expect(await status()).toEqual([]);
  } finally {
    await ua.stop();
  }
});
