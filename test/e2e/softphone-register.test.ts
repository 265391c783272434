// The console's softphone (sip.js in Chromium) registers as the agent's device over /sip with
// digest auth, shows up in /devices/status, and unregisters.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { launchBrowser, type LaunchedBrowser } from "../helpers/browser.js";
import { openPhoneLab, phoneLabDir } from "../helpers/phone-page.js";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let browser: LaunchedBrowser;
let token: string;
let accountId: string;

beforeAll(async () => {
  api = await startApi({ config: { rendererDir: await phoneLabDir() } });
  ({ token, accountId } = await api.login("admin"));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
  await api.close();
});

async function deviceOf(username: string): Promise<{ id: string; sip: { username: string; password: string } }> {
  const devices = (await api.server.store.account(accountId, "devices")).all();
  const d = devices.find((x) => (x.data.sip as { username?: string }).username === username);
  if (!d) throw new Error(`no device for ${username}`);
  return { id: d.id, sip: d.data.sip as { username: string; password: string } };
}

describe("softphone registration in Chromium", () => {
  it("registers with digest auth, appears in /devices/status, and unregisters", async () => {
    const device = await deviceOf("agent1");
    const page: Page = await openPhoneLab(browser.browser, api.url);
    const server = `${api.url.replace(/^http/, "ws")}/sip`;
    await page.evaluate(
      (o) => (globalThis as unknown as { lab: { start(o: unknown): Promise<void> } }).lab.start(o),
      { server, username: device.sip.username, password: device.sip.password, realm: "demo.switchboard.local" },
    );
    const status = await api.call<{ device_id: string; registered: boolean }[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token });
    expect(status.body.data).toContainEqual({ device_id: device.id, registered: true });

    await page.evaluate(() => (globalThis as unknown as { lab: { phone(): { unregister(): Promise<void> } } }).lab.phone().unregister());
    // sip.js resolves once the un-REGISTER is sent; the server drops the binding when it arrives.
    const registered = async () =>
      (await api.call<{ device_id: string }[]>("GET", `/v2/accounts/${accountId}/devices/status`, { token })).body.data.map((d) => d.device_id);
    for (let i = 0; i < 50 && (await registered()).includes(device.id); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await registered()).not.toContain(device.id);
    await page.close();
  });

  it("fails to register with a wrong password and says so", async () => {
    const device = await deviceOf("agent2");
    const page = await openPhoneLab(browser.browser, api.url);
    const error = await page.evaluate(
      (o) =>
        (globalThis as unknown as { lab: { start(o: unknown): Promise<void> } }).lab.start(o).then(
          () => "registered",
          (e: Error) => e.message,
        ),
      { server: `${api.url.replace(/^http/, "ws")}/sip`, username: device.sip.username, password: "wrong", realm: "demo.switchboard.local" },
    );
    expect(error).toMatch(/403/);
    await page.close();
  });
});
