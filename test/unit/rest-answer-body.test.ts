// An answer's body as sent (server/http/envelope.ts, answerBody): a large answer is written into a
// slab shared by the answers and sent as its own part of it. Its bytes are the text's UTF-8 exactly
// (non-ASCII, surrogate pairs, lone surrogates, answers at a slab's end), and no later answer
// writes over an earlier one's bytes, however many slabs they fill.
import { describe, expect, it } from "vitest";
import { answerBody } from "../../server/http/envelope.js";

function bytesOf(body: string | Buffer): Buffer {
  return typeof body === "string" ? Buffer.from(body, "utf8") : body;
}

describe("an answer's body", () => {
  it("leaves a small answer a string, and sends a large one as bytes", () => {
    expect(answerBody('{"status":"success"}')).toBe('{"status":"success"}');
    const large = `{"data":"${"x".repeat(8_000)}"}`;
    const body = answerBody(large);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect(bytesOf(body).equals(Buffer.from(large, "utf8"))).toBe(true);
  });

  it("is the text's UTF-8 byte for byte, and no later answer changes an earlier one's bytes", () => {
    const pieces = ["a", "é", "😀", "\u2028", "\ud800", "\udfff", "x\"\\", "€", "z"];
    const sent: { text: string; body: string | Buffer }[] = [];
    // Answers of varied sizes and characters, enough of them to fill several slabs.
    for (let i = 0; i < 600; i++) {
      const size = 4_000 + ((i * 7_919) % 29_000);
      let text = `{"n":${i},"t":"`;
      for (let j = 0; text.length < size; j++) text += pieces[(i + j) % pieces.length] ?? "";
      text += '"}';
      sent.push({ text, body: answerBody(text) });
    }
    expect(sent.filter((s) => Buffer.isBuffer(s.body)).length).toBeGreaterThan(500);
    for (const { text, body } of sent) {
      expect(bytesOf(body).equals(Buffer.from(text, "utf8"))).toBe(true);
      expect(bytesOf(body).length).toBe(Buffer.byteLength(text));
    }
  });

  it("leaves an answer larger than a slab's share a string", () => {
    const huge = "y".repeat(200_000);
    expect(answerBody(huge)).toBe(huge);
  });
});
