// Which audio a call plays: an account's media ids turned into what the media engine can play (the
// stored WAV file, or a tone_stream/silence_stream URI as given), and the music a held party hears.
import type { AudioSource, MediaEngine } from "../media/index.js";
import { MediaReferenceError, resolveMediaReference, wavPath } from "../media/reference.js";
import type { StoredDoc, Store } from "../store/index.js";

/** Heard on hold when the account has no music at all: a soft beep every four seconds. */
export const DEFAULT_HOLD_TONE = "tone_stream://v=-20;%(500,3500,440);loops=-1";
/** What a caller already answered hears while the server rings someone for them (US ringback). */
export const RINGBACK_TONE = "tone_stream://%(2000,4000,440,480);loops=-1";
/** The demo account's hold music (server/demo.ts), used when nothing else is configured. */
const DEMO_HOLD_MUSIC = "Hold music";

export class MediaLibrary {
  constructor(
    private readonly store: Store,
    private readonly media: MediaEngine,
  ) {}

  /**
   * A media reference (server/media/reference.ts) as what the player opens. Throws
   * MediaReferenceError, naming why, when it cannot be played.
   */
  async resolve(accountId: string, reference: string): Promise<string> {
    return resolveMediaReference(reference, await this.store.account(accountId, "media"));
  }

  /** A media reference as something playable; undefined when it names nothing we can play. */
  async uriOf(accountId: string, reference: string): Promise<string | undefined> {
    try {
      return await this.resolve(accountId, reference);
    } catch (err) {
      if (err instanceof MediaReferenceError) return undefined;
      throw err;
    }
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
