// Which audio a call plays: an account's media ids turned into what the media engine can play (the
// stored WAV file, or a tone_stream/silence_stream URI as given), and the music a held party hears.
import { join } from "node:path";
import type { AudioSource, MediaEngine } from "../media/index.js";
import type { Collection, StoredDoc, Store } from "../store/index.js";

/** Heard on hold when the account has no music at all: a soft beep every four seconds. */
export const DEFAULT_HOLD_TONE = "tone_stream://v=-20;%(500,3500,440);loops=-1";
/** What a caller already answered hears while the server rings someone for them (US ringback). */
export const RINGBACK_TONE = "tone_stream://%(2000,4000,440,480);loops=-1";
/** The demo account's hold music (server/demo.ts), used when nothing else is configured. */
const DEMO_HOLD_MUSIC = "Hold music";
const PLAYABLE_URI = /^(tone_stream|silence_stream):\/\/\S*$/;
const MEDIA_ID = /^[0-9a-f]{32}$/;

export class MediaLibrary {
  constructor(
    private readonly store: Store,
    private readonly media: MediaEngine,
  ) {}

  /** A media id or URI as something playable; undefined when it names nothing we can play. */
  async uriOf(accountId: string, idOrUri: string): Promise<string | undefined> {
    if (PLAYABLE_URI.test(idOrUri)) return idOrUri;
    if (!MEDIA_ID.test(idOrUri)) return undefined;
    const media = await this.store.account(accountId, "media");
    const doc = media.get(idOrUri);
    return doc && wavPath(media, doc);
  }

  /**
   * The music for the party of a device that holds: `mediaId` when given (a transfer's `moh`),
   * the device's music_on_hold.media_id, the account's, the demo "Hold music", else a tone.
   */
  async holdMusicUri(accountId: string, deviceId: string | undefined, mediaId?: string): Promise<string> {
    const devices = await this.store.account(accountId, "devices");
    const account = (await this.store.global("accounts")).get(accountId);
    const candidates = [mediaId, mediaIdOf(deviceId === undefined ? undefined : devices.get(deviceId)), mediaIdOf(account)];
    for (const id of candidates) {
      const uri = id === undefined ? undefined : await this.uriOf(accountId, id);
      if (uri !== undefined) return uri;
    }
    const media = await this.store.account(accountId, "media");
    const demo = media.all().find((m) => m.data.name === DEMO_HOLD_MUSIC);
    return (demo && wavPath(media, demo)) ?? DEFAULT_HOLD_TONE;
  }

  /** Music on hold as a looping source; the tone when the configured music cannot be played. */
  async holdMusic(accountId: string, deviceId: string | undefined, mediaId?: string): Promise<AudioSource> {
    const uri = await this.holdMusicUri(accountId, deviceId, mediaId);
    try {
      return await this.media.player(uri, { loop: true });
    } catch {
      return this.media.player(DEFAULT_HOLD_TONE);
    }
  }
}

function mediaIdOf(doc: StoredDoc | undefined): string | undefined {
  const musicOnHold = doc?.data.music_on_hold;
  if (typeof musicOnHold !== "object" || musicOnHold === null) return undefined;
  const id = (musicOnHold as Record<string, unknown>).media_id;
  return typeof id === "string" && id !== "" ? id : undefined;
}

/**
 * The WAV attachment's file. The store keeps attachments as files beside the collection file
 * (`<collection>.attachments/<doc id>/<name>`, docs/design-notes.md), and the player reads paths.
 */
function wavPath(collection: Collection, doc: StoredDoc): string | undefined {
  for (const [name, meta] of Object.entries(doc.attachments ?? {})) {
    if (/wav/i.test(meta.content_type) || name.toLowerCase().endsWith(".wav")) {
      return join(collection.file.replace(/\.json$/, ".attachments"), doc.id, name);
    }
  }
  return undefined;
}
