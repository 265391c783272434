// The words for a call that did not connect: from the SIP final response (the dock) and from a
// call record's hangup cause and code (the history).
import { describe, expect, it } from "vitest";
import { callFailureText, recordFailureText } from "../../renderer/state/failure-reason.js";

describe("failure reasons", () => {
  it("from a final response: the usual refusals in words, a cancel none, anything else with its code", () => {
    expect(callFailureText({ code: 404, reason: "Not Found" })).toBe("No such number");
    expect(callFailureText({ code: 486, reason: "Busy Here" })).toBe("Busy");
    expect(callFailureText({ code: 603, reason: "Decline" })).toBe("Declined");
    expect(callFailureText({ code: 480, reason: "Temporarily Unavailable" })).toBe("Unavailable");
    expect(callFailureText({ code: 480, reason: "No Answer" })).toBe("No answer");
    expect(callFailureText({ code: 408, reason: "Request Timeout" })).toBe("No answer");
    expect(callFailureText({ code: 503, reason: "Service Unavailable" })).toBe("Server could not connect the call");
    expect(callFailureText({ code: 487, reason: "Request Terminated" })).toBeNull();
    expect(callFailureText({ code: 482, reason: "Loop Detected" })).toBe("Failed (482 Loop Detected)");
  });

  it("from a call record: the hangup cause first, else the sip code", () => {
    expect(recordFailureText("USER_BUSY", "sip:486")).toBe("Busy");
    expect(recordFailureText("UNALLOCATED_NUMBER", "sip:404")).toBe("No such number");
    expect(recordFailureText("CALL_REJECTED", "sip:603")).toBe("Declined");
    expect(recordFailureText("NO_ANSWER", "sip:480")).toBe("No answer");
    expect(recordFailureText("SUBSCRIBER_ABSENT", "sip:480")).toBe("Unavailable");
    expect(recordFailureText("NORMAL_UNSPECIFIED", "sip:486")).toBe("Busy");
    expect(recordFailureText("", "")).toBeNull();
  });
});
