// MMS images uploaded through the texting API (collection `texting_media`, the bytes as an
// attachment beside it): checked by type, size and leading bytes, served back at a public,
// unguessable URL (`/texting/media/{account_id}/{media_id}`) that a message's `media` can name.
import { Readable } from "node:stream";
import { guardUpload } from "../http/binary.js";
import { ApiError } from "../http/errors.js";
import type { Collection, Store, StoredDoc } from "../store/index.js";
import { TextingError } from "./errors.js";

export const MEDIA_COLLECTION = "texting_media";
/** What carriers commonly take for one MMS image. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

interface ImageFormat {
  attachment: string;
  magic(head: Buffer): boolean;
}

const IMAGE_TYPES: Record<string, ImageFormat> = {
  "image/jpeg": { attachment: "image.jpg", magic: (h) => h.length >= 3 && h[0] === 0xff && h[1] === 0xd8 && h[2] === 0xff },
  "image/png": { attachment: "image.png", magic: (h) => h.length >= 8 && h.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  "image/gif": { attachment: "image.gif", magic: (h) => h.length >= 6 && /^GIF8[79]a$/.test(h.toString("latin1", 0, 6)) },
  "image/webp": { attachment: "image.webp", magic: (h) => h.length >= 12 && h.toString("latin1", 0, 4) === "RIFF" && h.toString("latin1", 8, 12) === "WEBP" },
};

export const IMAGE_CONTENT_TYPES = Object.keys(IMAGE_TYPES);
const SNIFF_BYTES = 12;

export function mediaPath(accountId: string, mediaId: string): string {
  return `/texting/media/${accountId}/${mediaId}`;
}

export class TextingMedia {
  constructor(private readonly store: Store) {}

  collection(accountId: string): Promise<Collection> {
    return this.store.account(accountId, MEDIA_COLLECTION);
  }

  /** Stores one image for a user; a refusal is a texting error naming the limit or the type. */
  async save(accountId: string, userId: string, body: unknown, contentTypeHeader: string | undefined, declaredLength: number): Promise<StoredDoc> {
    const contentType = (contentTypeHeader ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
    const format = IMAGE_TYPES[contentType];
    if (!format) {
      throw new TextingError([`Unsupported media type '${contentType || "none"}': send the image bytes as ${IMAGE_CONTENT_TYPES.join(", ")}`]);
    }
    if (!(body instanceof Readable)) throw new TextingError(["The request body must be the image's bytes"]);
    if (declaredLength > MAX_IMAGE_BYTES) throw tooLarge();
    const collection = await this.collection(accountId);
    const doc = await collection.create({ user_id: userId, content_type: contentType });
    const bytes = guardUpload(body, {
      maxBytes: MAX_IMAGE_BYTES,
      sniffBytes: SNIFF_BYTES,
      sniff: (head) => (format.magic(head) ? undefined : new ApiError("invalid_data", { content_type: { magic: { message: "mismatch" } } })),
    });
    try {
      const stored = await collection.putAttachment(doc.id, format.attachment, bytes, contentType);
      const length = stored.attachments?.[format.attachment]?.length ?? 0;
      if (length === 0) throw new TextingError(["The image is empty"]);
      return await collection.update(doc.id, { ...stored.data, length });
    } catch (err) {
      await collection.delete(doc.id).catch(() => undefined);
      if (err instanceof ApiError && err.code === "payload_too_large") throw tooLarge();
      if (err instanceof ApiError) throw new TextingError([`The bytes are not an ${contentType} image`]);
      throw err;
    }
  }

  /** The stored image and its attachment name, or null. */
  async find(accountId: string, mediaId: string): Promise<{ collection: Collection; doc: StoredDoc; name: string } | null> {
    // Only real accounts: opening a collection of an unknown id would make its directory.
    if (!(await this.store.global("accounts")).has(accountId)) return null;
    const collection = await this.collection(accountId);
    const doc = collection.get(mediaId);
    const name = Object.keys(doc?.attachments ?? {})[0];
    return doc && name ? { collection, doc, name } : null;
  }
}

function tooLarge(): TextingError {
  return new TextingError([`The image is larger than ${MAX_IMAGE_BYTES} bytes (${MAX_IMAGE_BYTES / 1024 / 1024} MiB)`]);
}
