// The forms of a media reference (server/media/reference.ts) without a store: what parses as a
// media id or a stream the player reads, and the rule each refusal names.
import { describe, expect, it } from "vitest";
import { MediaReferenceError, parseMediaReference } from "../../server/media/reference.js";

function ruleOf(value: string): string | undefined {
  try {
    parseMediaReference(value);
    return undefined;
  } catch (err) {
    if (err instanceof MediaReferenceError) return err.rule;
    throw err;
  }
}

describe("parseMediaReference", () => {
  it("reads media ids and the streams the player plays", () => {
    expect(parseMediaReference("0123456789abcdef0123456789abcdef")).toEqual({ kind: "media", id: "0123456789abcdef0123456789abcdef" });
    for (const uri of ["tone_stream://440", "tone_stream://v=-20;%(500,3500,440);loops=-1", "silence_stream://", "silence_stream://-1", "silence_stream://500,1400"]) {
      expect(parseMediaReference(uri)).toEqual({ kind: "stream", uri });
    }
  });

  it("refuses every other form as format", () => {
    for (const value of ["", "https://example.com/a.wav", "HTTP://EXAMPLE.COM/a.mp3", "file:///etc/hosts", "/etc/hosts", "0123456789ABCDEF0123456789ABCDEF", "tone_stream://", "tone_stream://%(1,1)", "silence_stream://1s", "shout://radio"]) {
      expect(ruleOf(value), value).toBe("format");
    }
  });
});
