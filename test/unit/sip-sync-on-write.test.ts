// The devices resource's afterWrite hook for `data.sync: true`: it asks SIP for check-sync only
// when the write carried sync:true, for the written device of the write's account.
import { describe, expect, it } from "vitest";
import { syncOnWrite } from "../../server/api/device-status.js";
import type { ApiDeps } from "../../server/api/deps.js";
import type { WriteCtx } from "../../server/http/resource.js";
import type { StoredDoc } from "../../server/store/index.js";
import type { SipService } from "../../server/sip/index.js";

function run(input: Record<string, unknown>): [string, string][] {
  const calls: [string, string][] = [];
  const sip = { checkSync: (accountId: string, deviceId: string) => calls.push([accountId, deviceId]) } as unknown as SipService;
  const deps = { sip } as unknown as ApiDeps;
  const doc = { id: "d".repeat(32) } as StoredDoc;
  const ctx = { accountId: "a".repeat(32), input } as unknown as WriteCtx;
  syncOnWrite(deps, doc, ctx);
  return calls;
}

describe("syncOnWrite", () => {
  it("sends check-sync for the device when the write said sync: true", () => {
    expect(run({ name: "phone", sync: true })).toEqual([["a".repeat(32), "d".repeat(32)]]);
  });

  it("sends nothing without sync: true", () => {
    expect(run({ name: "phone" })).toEqual([]);
    expect(run({ name: "phone", sync: false })).toEqual([]);
    expect(run({ name: "phone", sync: "true" })).toEqual([]);
  });
});
