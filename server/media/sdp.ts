// The few SDP edits and readings the media legs need, as text functions: narrowing a remote
// offer's audio codecs to G.711 + telephone-event/8000, filtering ICE candidates, reading payload types.

export class SdpError extends Error {
  override name = "SdpError";
}

const STATIC_PAYLOAD_TYPES: Record<string, string> = { "0": "PCMU/8000", "8": "PCMA/8000" };
const KEPT_CODECS = new Set(["PCMU/8000", "PCMA/8000", "TELEPHONE-EVENT/8000"]);

interface Section {
  lines: string[];
}

function split(sdp: string): { eol: string; session: string[]; media: Section[] } {
  const eol = sdp.includes("\r\n") ? "\r\n" : "\n";
  const lines = sdp.split(/\r?\n/).filter((l) => l !== "");
  const session: string[] = [];
  const media: Section[] = [];
  for (const line of lines) {
    if (line.startsWith("m=")) media.push({ lines: [line] });
    else (media.at(-1)?.lines ?? session).push(line);
  }
  return { eol, session, media };
}

function join(eol: string, session: string[], media: Section[]): string {
  return [...session, ...media.flatMap((m) => m.lines)].join(eol) + eol;
}

/** Codec of each payload type of an m-section, as "NAME/rate" (upper-case name). */
function codecsOf(section: Section): Map<string, string> {
  const [, , , ...formats] = (section.lines[0] ?? "").split(" ");
  const codecs = new Map<string, string>();
  for (const pt of formats) {
    const rtpmap = section.lines.find((l) => l.startsWith(`a=rtpmap:${pt} `));
    const name = rtpmap ? rtpmap.slice(`a=rtpmap:${pt} `.length).split("/").slice(0, 2).join("/") : STATIC_PAYLOAD_TYPES[pt];
    if (name) codecs.set(pt, name.replace(/^[^/]+/, (n) => n.toUpperCase()));
  }
  return codecs;
}

/**
 * Narrows every audio m-section to PCMU/8000, PCMA/8000 and telephone-event/8000, dropping the
 * other payload types and their attributes. werift picks codecs by name, so an offer that also
 * lists telephone-event/48000 (Chromium's) would otherwise be answered with that one.
 * Throws SdpError when an audio section has neither PCMU nor PCMA.
 */
export function restrictToG711(sdp: string): string {
  const { eol, session, media } = split(sdp);
  for (const section of media) {
    const mline = section.lines[0] ?? "";
    if (!mline.startsWith("m=audio ")) continue;
    const kept = [...codecsOf(section)].filter(([, name]) => KEPT_CODECS.has(name)).map(([pt]) => pt);
    if (!kept.some((pt) => codecsOf(section).get(pt) !== "TELEPHONE-EVENT/8000")) {
      throw new SdpError("no common audio codec: the offer has neither PCMU/8000 nor PCMA/8000");
    }
    const fields = mline.split(" ");
    const dropped = new Set(fields.slice(3).filter((pt) => !kept.includes(pt)));
    section.lines = [
      [...fields.slice(0, 3), ...kept].join(" "),
      ...section.lines.slice(1).filter((line) => {
        const pt = /^a=(?:rtpmap|fmtp|rtcp-fb):(\d+)[ ]/.exec(line)?.[1];
        return pt === undefined || !dropped.has(pt);
      }),
    ];
  }
  return join(eol, session, media);
}

/** Removes ICE candidates whose connection address fails `keep` (e.g. to stay on loopback). */
export function filterCandidates(sdp: string, keep: (address: string) => boolean): string {
  const { eol, session, media } = split(sdp);
  for (const section of media) {
    section.lines = section.lines.filter((line) => {
      if (!line.startsWith("a=candidate:")) return true;
      const address = line.split(" ")[4];
      return address !== undefined && keep(address);
    });
  }
  return join(eol, session, media);
}

export function isLoopbackAddress(address: string): boolean {
  return address.startsWith("127.") || address === "::1";
}

/** The payload type of telephone-event/8000 in the first audio section, if offered. */
export function telephoneEventPayloadType(sdp: string): number | undefined {
  const audio = split(sdp).media.find((m) => (m.lines[0] ?? "").startsWith("m=audio "));
  if (!audio) return undefined;
  for (const [pt, name] of codecsOf(audio)) if (name === "TELEPHONE-EVENT/8000") return Number(pt);
  return undefined;
}
