import { describe, expect, it } from "vitest";
import { filterCandidates, isLoopbackAddress, restrictToG711, SdpError, telephoneEventPayloadType } from "../../server/media/sdp.js";

// The audio part of a Chromium offer, shortened: opus first, telephone-event at 48 and 8 kHz.
const CHROMIUM_OFFER = [
  "v=0",
  "o=- 4611731400430051336 2 IN IP4 127.0.0.1",
  "s=-",
  "t=0 0",
  "a=group:BUNDLE 0",
  "m=audio 9 UDP/TLS/RTP/SAVPF 111 63 9 0 8 13 110 126",
  "c=IN IP4 0.0.0.0",
  "a=candidate:1 1 udp 2122260223 127.0.0.1 54400 typ host generation 0",
  "a=candidate:2 1 udp 2122194687 192.0.2.2 54401 typ host generation 0",
  "a=candidate:3 1 udp 2122194687 5f3c0a7e-1b2c.local 54402 typ host generation 0",
  "a=candidate:4 1 tcp 1518280447 ::1 9 typ host tcptype active generation 0",
  "a=ice-ufrag:abcd",
  "a=sendrecv",
  "a=rtpmap:111 opus/48000/2",
  "a=rtcp-fb:111 transport-cc",
  "a=fmtp:111 minptime=10;useinbandfec=1",
  "a=rtpmap:63 red/48000/2",
  "a=fmtp:63 111/111",
  "a=rtpmap:9 G722/8000",
  "a=rtpmap:0 PCMU/8000",
  "a=rtpmap:8 PCMA/8000",
  "a=rtpmap:13 CN/8000",
  "a=rtpmap:110 telephone-event/48000",
  "a=rtpmap:126 telephone-event/8000",
  "a=fmtp:126 0-15",
  "",
].join("\r\n");

describe("restrictToG711", () => {
  it("keeps only PCMU, PCMA and telephone-event/8000 in the audio section, in the offer's order", () => {
    const sdp = restrictToG711(CHROMIUM_OFFER);
    const lines = sdp.split("\r\n");
    expect(lines).toContain("m=audio 9 UDP/TLS/RTP/SAVPF 0 8 126");
    expect(lines.filter((l) => /^a=(rtpmap|fmtp|rtcp-fb):/.test(l))).toEqual([
      "a=rtpmap:0 PCMU/8000",
      "a=rtpmap:8 PCMA/8000",
      "a=rtpmap:126 telephone-event/8000",
      "a=fmtp:126 0-15",
    ]);
    // Everything else is left as it was, line endings included.
    expect(lines).toContain("a=ice-ufrag:abcd");
    expect(lines).toContain("a=candidate:2 1 udp 2122194687 192.0.2.2 54401 typ host generation 0");
    expect(sdp.endsWith("\r\n")).toBe(true);
    expect(telephoneEventPayloadType(sdp)).toBe(126);
  });

  it("accepts static payload types without rtpmap lines", () => {
    const sdp = "v=0\nm=audio 5004 RTP/AVP 18 0 101\nc=IN IP4 10.0.0.1\na=rtpmap:101 telephone-event/8000\n";
    expect(restrictToG711(sdp)).toBe("v=0\nm=audio 5004 RTP/AVP 0 101\nc=IN IP4 10.0.0.1\na=rtpmap:101 telephone-event/8000\n");
  });

  it("throws SdpError when no G.711 is offered (the SIP side answers 488)", () => {
    const opusOnly = CHROMIUM_OFFER.replace("111 63 9 0 8 13 110 126", "111 126");
    expect(() => restrictToG711(opusOnly)).toThrow(SdpError);
  });

  it("leaves other media sections alone", () => {
    const sdp = "v=0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=rtpmap:96 VP8/90000\r\nm=audio 9 UDP/TLS/RTP/SAVPF 0\r\n";
    expect(restrictToG711(sdp)).toBe(sdp);
  });
});

describe("filterCandidates", () => {
  it("keeps loopback candidates only, dropping LAN and mDNS ones", () => {
    const sdp = filterCandidates(CHROMIUM_OFFER, isLoopbackAddress);
    expect(sdp.split("\r\n").filter((l) => l.startsWith("a=candidate:"))).toEqual([
      "a=candidate:1 1 udp 2122260223 127.0.0.1 54400 typ host generation 0",
      "a=candidate:4 1 tcp 1518280447 ::1 9 typ host tcptype active generation 0",
    ]);
  });
});
