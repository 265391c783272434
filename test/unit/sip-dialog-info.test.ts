// DTMF in SIP INFO bodies, as phones send it: dtmf-relay with Signal and Duration (any case,
// spaces, * and # as 10 and 11), the bare digit of application/dtmf, and what is no digit.
import { describe, expect, it } from "vitest";
import { parseDtmfInfo } from "../../server/sip/dtmf-info.js";

describe("parseDtmfInfo", () => {
  it("reads application/dtmf-relay", () => {
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=5\r\nDuration=160\r\n")).toEqual({ digit: "5", durationMs: 160 });
    expect(parseDtmfInfo("application/dtmf-relay", "signal= #\nduration = 250")).toEqual({ digit: "#", durationMs: 250 });
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=*")).toEqual({ digit: "*" });
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=10\r\nDuration=x")).toEqual({ digit: "*" });
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=11")).toEqual({ digit: "#" });
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=d")).toEqual({ digit: "D" });
  });

  it("reads application/dtmf", () => {
    expect(parseDtmfInfo("application/dtmf", "7\r\n")).toEqual({ digit: "7" });
  });

  it("finds no digit in junk or in other types", () => {
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=Z")).toBeNull();
    expect(parseDtmfInfo("application/dtmf-relay", "Duration=160")).toBeNull();
    expect(parseDtmfInfo("application/dtmf-relay", "Signal=55")).toBeNull();
    expect(parseDtmfInfo("application/dtmf", "")).toBeNull();
    expect(parseDtmfInfo("text/plain", "5")).toBeNull();
  });
});
