// A media worker's rehearsal as it starts (thread.ts), before it says it is ready: one offer made
// as a leg makes it (one host candidate on the configured address), and an answer to that offer
// made by a second connection as a leg accepting an offer does (PeerLeg.acceptOffer), both thrown
// away, so the first call's offer and answer run code already compiled (and in the worker's code
// cache, written at ready). The answer was the first call's largest first-run cost in the worker
// (issue 17, "Start"). The answering side gets the offer without its candidates, so it has no
// address to check and nothing connects (a connection rehearsed to the end was tried in session
// 17 and withdrawn); both connections are closed, with their sockets, before this resolves.
import type * as Werift from "werift";
import { hostOnlyIce } from "../leg.js";

export async function rehearse(werift: typeof Werift, host: string): Promise<void> {
  const config = hostOnlyIce(host);
  const offerer = new werift.RTCPeerConnection(config);
  const answerer = new werift.RTCPeerConnection(config);
  try {
    offerer.addTransceiver("audio", { direction: "sendrecv" });
    await offerer.setLocalDescription(await offerer.createOffer());
    const offer = (offerer.localDescription?.sdp ?? "").replace(/^a=(candidate|end-of-candidates)\b.*\r?\n/gm, "");
    await answerer.setRemoteDescription({ type: "offer", sdp: offer });
    answerer.getTransceivers().find((t) => t.kind === "audio")?.setDirection("sendrecv");
    await answerer.setLocalDescription(await answerer.createAnswer());
  } finally {
    await Promise.all([offerer.close(), answerer.close()]);
  }
}
