// The messages a SIP flood sends, shared by the hostile SIP test and bench/hostile-sip.ts: a
// well-formed out-of-dialog OPTIONS, and the i-th message of a malformed flood (requests the
// grammar rejects, each worth a 400, or plain junk).
import { hex } from "./sip-client.js";

/** An OPTIONS from nobody in particular to `realm`, with CSeq `cseq`. */
export function probeOptions(realm: string, cseq = 1): string {
  return [
    `OPTIONS sip:${realm} SIP/2.0`,
    `Via: SIP/2.0/WSS ${hex(4)}.invalid;branch=z9hG4bK${hex()}`,
    "Max-Forwards: 70",
    `To: <sip:${realm}>`,
    `From: <sip:probe@${realm}>;tag=${hex(4)}`,
    `Call-ID: ${hex()}`,
    `CSeq: ${cseq} OPTIONS`,
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
}

/** The i-th message of a malformed flood. */
export function floodGarbage(realm: string, i: number): string | Buffer {
  switch (i % 4) {
    case 0:
      return probeOptions(realm, i).replace(/To: .*/, `To: <<${"x".repeat(i % 97)}`);
    case 1:
      return probeOptions(realm, i).replace(/Via: .*/, "Via: SIP/2.0/WSS ;;;branch");
    case 2:
      return Buffer.from([0xff, 0xfe, i & 0xff, 0x80]);
    default:
      return `INVITE ${"y".repeat(i % 200)}\r\n\r\n`;
  }
}
