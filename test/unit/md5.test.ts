// Checks the renderer's md5 against RFC 1321's test suite and against Node's own md5, since a
// wrong digest would make every sign-in fail with "invalid credentials".
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { md5Hex } from "../../renderer/api/md5.js";

function nodeMd5(text: string): string {
  return createHash("md5").update(text, "utf8").digest("hex");
}

describe("md5Hex", () => {
  it("matches the RFC 1321 test suite", () => {
    expect(md5Hex("")).toBe("d41d8cd98f00b204e9800998ecf8427e");
    expect(md5Hex("a")).toBe("0cc175b9c0f1b6a831c399e269772661");
    expect(md5Hex("abc")).toBe("900150983cd24fb0d6963f7d28e17f72");
    expect(md5Hex("message digest")).toBe("f96b697d7cb7938d525a2f31aaf161d0");
    expect(md5Hex("abcdefghijklmnopqrstuvwxyz")).toBe("c3fcd3d76192e4007dfb496cca67e13b");
    expect(md5Hex("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")).toBe(
      "d174ab98d277d9f5a5611c2c9f419d9f",
    );
    expect(md5Hex("1234567890".repeat(8))).toBe("57edf4a22be3c955ac49da2e2107b67a");
  });

  it("agrees with node:crypto across every padding boundary", () => {
    // Lengths 0..130 cross the 55/56/64-byte edges where the padding block logic changes.
    for (let length = 0; length <= 130; length++) {
      const text = "x".repeat(length);
      expect(md5Hex(text), `length ${length}`).toBe(nodeMd5(text));
    }
  });

  it("hashes UTF-8 bytes, as the server does for non-ASCII passwords", () => {
    for (const text of ["jörg:pässwörd", "агент:пароль", "客服:密码", "emoji:🔐☎️"]) {
      expect(md5Hex(text)).toBe(nodeMd5(text));
    }
  });

  it("produces the login credentials for a known user", () => {
    expect(md5Hex("admin:secret")).toBe(nodeMd5("admin:secret"));
    expect(md5Hex("admin:secret")).toMatch(/^[0-9a-f]{32}$/);
  });
});
