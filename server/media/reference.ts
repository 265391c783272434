// What a client may name as audio for the server to play (a queue's hold_treatment, a simulated
// caller's audio, a callflow's prompts), decided here once so that what one place accepts another
// can play: a media id of the account whose audio is uploaded as WAV, or a tone_stream:// or
// silence_stream:// URI that the player can read. An http(s) address is refused: nothing here
// fetches audio from the web, so a queue configured with one would play the fallback forever.
import { join } from "node:path";
import { ID_PATTERN, type Collection, type StoredDoc } from "../store/index.js";
import { MediaUriError, parseToneStream } from "./player.js";

const TONE_STREAM = /^tone_stream:\/\/(.*)$/s;
/** `silence_stream://[ms][,noise]`: ms -1 or absent means forever (FreeSWITCH's form). */
const SILENCE_STREAM = /^silence_stream:\/\/(-?\d+)?(,\d+)?$/;

/** Why a reference cannot be played, as a field error's rule and message. */
export class MediaReferenceError extends Error {
  override name = "MediaReferenceError";
  constructor(
    readonly rule: "format" | "not_found" | "no_audio",
    message: string,
    readonly value: string,
  ) {
    super(message);
  }
}

export type MediaReference = { kind: "media"; id: string } | { kind: "stream"; uri: string };

/** The form of a reference, without looking anything up; throws MediaReferenceError (format). */
export function parseMediaReference(value: string): MediaReference {
  if (ID_PATTERN.test(value)) return { kind: "media", id: value };
  const tone = TONE_STREAM.exec(value);
  if (tone) {
    try {
      parseToneStream(tone[1] ?? "");
    } catch (err) {
      if (err instanceof MediaUriError) throw new MediaReferenceError("format", err.message, value);
      throw err;
    }
    return { kind: "stream", uri: value };
  }
  if (SILENCE_STREAM.test(value)) return { kind: "stream", uri: value };
  if (value.startsWith("silence_stream://")) throw new MediaReferenceError("format", "silence_stream: expected silence_stream://[ms]", value);
  throw new MediaReferenceError("format", "Value is not playable media: a media id of the account (with its audio uploaded), tone_stream://... or silence_stream://...", value);
}

/**
 * What the player opens for a reference: the URI itself, or the media's WAV file. Throws
 * MediaReferenceError when the reference is malformed, names no media of `media` (the account's
 * collection), or names media whose audio is not uploaded (or is not WAV).
 */
export function resolveMediaReference(value: string, media: Collection): string {
  const reference = parseMediaReference(value);
  if (reference.kind === "stream") return reference.uri;
  const doc = media.get(reference.id);
  if (!doc) throw new MediaReferenceError("not_found", "no media with this id", value);
  const path = wavPath(media, doc);
  if (path === undefined) throw new MediaReferenceError("no_audio", "this media has no WAV audio to play: upload it to /media/{media_id}/raw", value);
  return path;
}

/**
 * The WAV attachment's file. The store keeps attachments as files beside the collection file
 * (`<collection>.attachments/<doc id>/<name>`, docs/design-notes.md), and the player reads paths.
 */
export function wavPath(collection: Collection, doc: StoredDoc): string | undefined {
  for (const [name, meta] of Object.entries(doc.attachments ?? {})) {
    if (/wav/i.test(meta.content_type) || name.toLowerCase().endsWith(".wav")) {
      return join(collection.file.replace(/\.json$/, ".attachments"), doc.id, name);
    }
  }
  return undefined;
}
