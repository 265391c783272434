// A media worker's start-up rehearsal (server/media/worker/rehearse.ts), run on werift itself: it
// makes an offer and an answer to it (the two halves of a first call's negotiation: the answer was
// the first call's largest first-run cost in the worker), and leaves nothing behind: both
// connections closed, neither ever connected (the answering side is given no candidate to
// check), and no other connection made.
import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import type * as Werift from "werift";
import { rehearse } from "../../server/media/worker/rehearse.js";

const werift = createRequire(import.meta.url)("werift") as typeof Werift;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a media worker's rehearsal", () => {
  it("makes an offer and an answer to it, and leaves both connections closed, never connected", async () => {
    const proto = werift.RTCPeerConnection.prototype;
    const offers = vi.spyOn(proto, "createOffer");
    const answers = vi.spyOn(proto, "createAnswer");
    const made: { pc: Werift.RTCPeerConnection; ice: string[]; sdp: () => string }[] = [];
    const remote = vi.spyOn(proto, "setRemoteDescription");
    const setLocal = proto.setLocalDescription;
    vi.spyOn(proto, "setLocalDescription").mockImplementation(function (this: Werift.RTCPeerConnection, description) {
      const ice: string[] = [];
      this.iceConnectionStateChange.subscribe((state) => ice.push(state));
      made.push({ pc: this, ice, sdp: () => this.localDescription?.sdp ?? "" });
      return setLocal.call(this, description);
    });
    await rehearse(werift, "127.0.0.1");
    expect(offers).toHaveBeenCalledTimes(1);
    expect(answers).toHaveBeenCalledTimes(1);
    expect(made).toHaveLength(2);
    const [offerer, answerer] = made;
    expect(offerer?.sdp()).toMatch(/^a=candidate:.* 127\.0\.0\.1 \d+ typ host/m);
    expect(answerer?.sdp()).toMatch(/^a=sendrecv/m);
    // The answering side was given the offer without its candidates: no address to check.
    expect(remote).toHaveBeenCalledTimes(1);
    expect(remote.mock.calls[0]?.[0].sdp).toMatch(/^m=audio/m);
    expect(remote.mock.calls[0]?.[0].sdp).not.toMatch(/a=candidate|a=end-of-candidates/);
    for (const { pc, ice } of made) {
      expect(pc.connectionState).toBe("closed");
      expect(ice).not.toContain("connected");
    }
  });
});
