// Reading a `call_recording` setting for one call: Kazoo's direction × network matrix with `any`,
// the simpler `{enabled}`, the most specific level deciding, explicit refusals, the limits.
import { describe, expect, it } from "vitest";
import { recordingVerdict } from "../../server/calls/recording-settings.js";

const on = { minMs: 0, maxMs: undefined };

describe("recordingVerdict", () => {
  it("says nothing without a setting object", () => {
    for (const value of [undefined, null, true, "yes", [], {}]) expect(recordingVerdict(value, "inbound", "onnet")).toBeUndefined();
  });

  it("takes {enabled} at the top level for every call, and {enabled:false} as a refusal", () => {
    for (const direction of ["inbound", "outbound"] as const) {
      for (const network of ["onnet", "offnet"] as const) {
        expect(recordingVerdict({ enabled: true }, direction, network)).toEqual(on);
        expect(recordingVerdict({ enabled: false }, direction, network)).toBe("refused");
      }
    }
  });

  it("reads the direction × network matrix, with any on either axis", () => {
    const inboundOnnet = { inbound: { onnet: { enabled: true } } };
    expect(recordingVerdict(inboundOnnet, "inbound", "onnet")).toEqual(on);
    expect(recordingVerdict(inboundOnnet, "inbound", "offnet")).toBeUndefined();
    expect(recordingVerdict(inboundOnnet, "outbound", "onnet")).toBeUndefined();

    const anyOffnet = { any: { offnet: { enabled: true } } };
    expect(recordingVerdict(anyOffnet, "outbound", "offnet")).toEqual(on);
    expect(recordingVerdict(anyOffnet, "inbound", "offnet")).toEqual(on);
    expect(recordingVerdict(anyOffnet, "inbound", "onnet")).toBeUndefined();

    const outboundAny = { outbound: { any: { enabled: true } } };
    expect(recordingVerdict(outboundAny, "outbound", "onnet")).toEqual(on);
    expect(recordingVerdict(outboundAny, "inbound", "onnet")).toBeUndefined();

    expect(recordingVerdict({ inbound: { enabled: true } }, "inbound", "offnet")).toEqual(on);
    expect(recordingVerdict({ inbound: { enabled: true } }, "outbound", "offnet")).toBeUndefined();
  });

  it("lets the most specific level decide", () => {
    const setting = { enabled: true, inbound: { offnet: { enabled: false }, any: { enabled: true, time_limit: 60 } } };
    expect(recordingVerdict(setting, "inbound", "offnet")).toBe("refused");
    expect(recordingVerdict(setting, "inbound", "onnet")).toEqual({ minMs: 0, maxMs: 60_000 });
    expect(recordingVerdict(setting, "outbound", "offnet")).toEqual(on);
    // A level without `enabled` says nothing and the next one is asked.
    expect(recordingVerdict({ inbound: { onnet: { time_limit: 5 } }, enabled: true }, "inbound", "onnet")).toEqual(on);
  });

  it("turns record_min_sec and time_limit into milliseconds, ignoring values that are not positive numbers", () => {
    expect(recordingVerdict({ enabled: true, record_min_sec: 3, time_limit: 90 }, "inbound", "onnet")).toEqual({ minMs: 3000, maxMs: 90_000 });
    expect(recordingVerdict({ enabled: true, record_min_sec: -1, time_limit: "90" }, "inbound", "onnet")).toEqual(on);
  });
});
