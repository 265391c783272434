// Every hook type on a real call: a sip.js softphone in Chromium registers (register), a simulated
// caller dials it and it answers (channel_create, channel_answer, channel_bridge), the caller hangs
// up (channel_destroy), a second simulated call goes unanswered (missed_call), the phone leaves
// (deregister), and a device edit fires the object hook. A real HTTP receiver records them all.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openPhoneLab, phoneLabDir, startLabPhone, type LabWindow } from "../helpers/phone-page.js";
import { startApi, type TestApi } from "../helpers/api.js";
import { poll } from "../helpers/poll.js";

interface Delivery {
  path: string;
  body: Record<string, unknown>;
}

let api: TestApi;
let token: string;
let accountId: string;
let browser: LaunchedBrowser;
let page: Page;
let receiverUrl: string;
const deliveries: Delivery[] = [];
const receiver = createServer((req: IncomingMessage, res) => {
  let text = "";
  req.on("data", (c: Buffer) => (text += c.toString()));
  req.on("end", () => {
    deliveries.push({ path: req.url ?? "", body: JSON.parse(text || "{}") as Record<string, unknown> });
    res.writeHead(200).end("ok");
  });
});

const HOOKS: { hook: string; type?: string }[] = [
  { hook: "channel_create" },
  { hook: "channel_answer" },
  { hook: "channel_bridge" },
  { hook: "channel_destroy" },
  { hook: "notifications", type: "missed_call" },
  { hook: "notifications", type: "register" },
  { hook: "notifications", type: "deregister" },
  { hook: "object" },
];
const pathOf = (h: { hook: string; type?: string }) => `/${h.hook}${h.type ? `-${h.type}` : ""}`;
const at = (path: string) => deliveries.filter((d) => d.path === path).map((d) => d.body);

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  for (const h of HOOKS) {
    const res = await api.call("PUT", `/v2/accounts/${accountId}/webhooks`, {
      token,
      data: {
        name: pathOf(h),
        hook: h.hook,
        uri: `${receiverUrl}${pathOf(h)}`,
        http_verb: "post",
        format: "json",
        ...(h.type ? { custom_data: { type: h.type } } : {}),
      },
    });
    expect(res.status, res.text).toBe(201);
  }
  browser = await launchBrowser();
  page = await openPhoneLab(browser.browser, api.url);
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
  await new Promise((resolve) => receiver.close(resolve));
});

describe("webhooks on a real call", () => {
  it("fires every hook type with its payload", async () => {
    const devices = (await api.server.store.account(accountId, "devices")).all();
    const device = devices.find((d) => (d.data.sip as { username?: string }).username === "agent1");
    await startLabPhone(page, api, accountId, "agent1");

    await poll("register delivered", async () => (at("/notifications-register").length > 0 ? true : undefined));
    expect(at("/notifications-register")[0]).toMatchObject({ hook_event: "notifications", account_id: accountId, device_id: device?.id });

    // An answered, bridged call from a simulated customer, hung up by the customer.
    const sim = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      token,
      data: { to: "1002", caller_id_name: "Customer", caller_id_number: "+14155550100", audio: "tone_stream://1200" },
    });
    expect(sim.status, sim.text).toBe(201);
    const offered = await poll("the page rung", async () =>
      (await page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls())).find((c) => c.state === "incoming"),
    );
    await page.evaluate((id) => (globalThis as unknown as LabWindow).lab.phone().answer(id), offered.id);
    await poll("bridge delivered", async () => (at("/channel_bridge").length > 0 ? true : undefined));
    const hangup = await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${sim.body.data.id}`, { token, data: { action: "hangup" } });
    expect(hangup.status).toBe(202);
    await poll("destroys delivered", async () => (at("/channel_destroy").length >= 2 ? true : undefined));

    for (const path of ["/channel_create", "/channel_answer", "/channel_bridge", "/channel_destroy"]) {
      const first = at(path)[0];
      expect(first, path).toMatchObject({ hook_event: path.slice(1), account_id: accountId, call_id: expect.any(String) });
      expect(["inbound", "outbound"]).toContain(first?.call_direction);
    }
    const inbound = at("/channel_create").find((p) => p.call_direction === "inbound");
    expect(inbound).toMatchObject({ caller_id_number: "+14155550100", caller_id_name: "Customer" });
    const destroy = at("/channel_destroy")[0];
    expect(destroy).toMatchObject({ hangup_cause: expect.any(String), hangup_code: expect.any(String) });
    expect(typeof destroy?.duration_seconds).toBe("number");

    // A call nobody answers: the customer gives up while the phone rings.
    const missed = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
      token,
      // silence_stream:// with no duration, as the issue writes it: silence until hang-up.
      data: { to: "1002", caller_id_number: "+14155550111", audio: "silence_stream://" },
    });
    expect(missed.status, missed.text).toBe(201);
    await poll("the page rung again", async () =>
      (await page.evaluate(() => (globalThis as unknown as LabWindow).lab.calls())).find((c) => c.state === "incoming"),
    );
    await api.call("POST", `/v2/accounts/${accountId}/sim/calls/${missed.body.data.id}`, { token, data: { action: "hangup" } });
    await poll("missed_call delivered", async () => (at("/notifications-missed_call").length > 0 ? true : undefined));
    expect(at("/notifications-missed_call")[0]).toMatchObject({ hook_event: "notifications", account_id: accountId });

    // The phone leaves, and a device edit is an object event.
    await page.evaluate(() => (globalThis as unknown as LabWindow).lab.phone().unregister());
    await poll("deregister delivered", async () => (at("/notifications-deregister").length > 0 ? true : undefined));
    await api.call("PATCH", `/v2/accounts/${accountId}/devices/${device?.id ?? ""}`, { token, data: { name: "renamed" } });
    await poll("object delivered", async () => (at("/object").some((p) => p.id === device?.id) ? true : undefined));
    expect(at("/object").find((p) => p.id === device?.id)).toMatchObject({ action: "doc_edited", type: "device", account_id: accountId });
  });
});
