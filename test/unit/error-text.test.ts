// The console's failures in words (renderer/api/error-text.ts): one function per purpose.
import { describe, expect, it } from "vitest";
import { ApiRequestError } from "../../renderer/api/client.js";
import { apiErrorText, errorMessage, monitorErrorText, relayUrlErrorText, requestErrorText, signInErrorText } from "../../renderer/api/error-text.js";
import { TextingRequestError } from "../../renderer/api/texting.js";

const refusal = (status: number, data: unknown = {}) => new ApiRequestError("http", status, "", data, null, `HTTP ${status}`);
const unreachable = new ApiRequestError("network", 0, "", null, null, "fetch failed");

describe("error words", () => {
  it("errorMessage: the error's own message, the texting server's lines, or the thrown value", () => {
    expect(errorMessage(new Error("boom"))).toBe("boom");
    expect(errorMessage(new TextingRequestError(400, ["Body is empty.", "Contact opted out."]))).toBe("Body is empty. Contact opted out.");
    expect(errorMessage("plain")).toBe("plain");
  });

  it("apiErrorText: the refusal's first field problem, or the kind of failure", () => {
    expect(apiErrorText(refusal(400, { uri: { format: { message: "Value is not a valid URI" } } }))).toBe("the server refused it: uri: Value is not a valid URI.");
    expect(apiErrorText(refusal(403))).toBe("only an admin may do this.");
    expect(apiErrorText(unreachable)).toBe("the server cannot be reached.");
    expect(apiErrorText(new Error("boom"))).toBe("something went wrong in the console.");
  });

  it("the words of sign-in, the agent's requests, the supervisor's listen-in and the relay URL", () => {
    expect(signInErrorText(unreachable, "http://pbx:8000")).toBe("Cannot reach the server at http://pbx:8000. Check that it is running and the address is right.");
    expect(requestErrorText("ready", refusal(400, { action: { illegal: { message: "Not logged in" } } }))).toBe("Could not make you Ready: Not logged in.");
    expect(requestErrorText("queue:q1", new Error("boom"))).toBe("Could not change your availability for that queue: boom");
    expect(monitorErrorText(refusal(400, { target: { no_call: { message: "not on a call" } } }))).toBe("That agent is on no call to listen to.");
    expect(monitorErrorText(new Error("boom"))).toBe("Could not start listening: boom");
    expect(relayUrlErrorText(new TextingRequestError(400, ["HTTP 400"]))).toBe("Enter the relay URL as http://host/path or https://host/path.");
    expect(relayUrlErrorText(new Error("boom"))).toBe("Cannot save the relay URL: boom");
  });
});
