// /v2/accounts/{account_id}/media: prompts and music of an account, a metadata document plus
// its audio, uploaded, downloaded (with Range) and deleted as raw bytes at /media/{media_id}/raw.
import type { FastifyInstance } from "fastify";
import { Readable } from "node:stream";
import { guardUpload, sendAttachment } from "../http/binary.js";
import { ifMatch, registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { docOutcome, notFound, registerDocResource, storeError, type Data, type WriteCtx } from "../http/resource.js";
import { fieldError, type JsonSchema } from "../http/validation.js";
import type { Collection, StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const MEDIA_SOURCES = ["upload", "recording", "tts"] as const;

/** Larger than any prompt or hold music an office needs; a bound so one upload cannot fill the disk. */
export const MAX_MEDIA_BYTES = 20 * 1024 * 1024;

/** Media that is played from elsewhere rather than uploaded: tones, silence, web addresses. */
const MEDIA_URI = /^(tone_stream|silence_stream|https?):\/\/\S+$/;

export function isMediaUri(value: string): boolean {
  return MEDIA_URI.test(value);
}

interface AudioFormat {
  contentType: string;
  attachment: string;
  /** What the first bytes must look like. */
  magic(head: Buffer): boolean;
  expected: string;
}

const WAV: AudioFormat = {
  contentType: "audio/wav",
  attachment: "media.wav",
  magic: (head) => head.length >= 12 && head.toString("latin1", 0, 4) === "RIFF" && head.toString("latin1", 8, 12) === "WAVE",
  expected: "a RIFF....WAVE header",
};

const MP3: AudioFormat = {
  contentType: "audio/mpeg",
  attachment: "media.mp3",
  // An ID3 tag, or straight into an MPEG audio frame (11 sync bits set).
  magic: (head) =>
    (head.length >= 3 && head.toString("latin1", 0, 3) === "ID3") ||
    (head.length >= 2 && head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0),
  expected: "an ID3 tag or an MPEG frame sync",
};

/** Upload content types, aliases included, as clients of the hosted service send them. */
const UPLOAD_TYPES: Record<string, AudioFormat> = {
  "audio/wav": WAV,
  "audio/x-wav": WAV,
  "audio/wave": WAV,
  "audio/vnd.wave": WAV,
  "audio/mpeg": MP3,
  "audio/mp3": MP3,
  "audio/mpeg3": MP3,
  "audio/x-mpeg-3": MP3,
};

/** "RIFF", its chunk size, "WAVE": the longest signature checked. */
const SNIFF_BYTES = 12;

export const mediaSchema: JsonSchema = {
  type: "object",
  required: ["name"],
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    description: { type: "string", maxLength: 1024 },
    media_source: { type: "string", enum: [...MEDIA_SOURCES] },
    streamable: { type: "boolean" },
    language: { type: "string", pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$" },
    is_prompt: { type: "boolean" },
    prompt_id: { type: "string", minLength: 1, maxLength: 128 },
    tts: {
      type: "object",
      properties: {
        text: { type: "string", minLength: 1, maxLength: 4096 },
        voice: { type: "string", minLength: 1, maxLength: 64 },
      },
    },
    // Set by the server from the uploaded audio; what a client sends is ignored.
    content_type: { type: "string" },
    content_length: { type: "integer", minimum: 0 },
  },
};

/** Defaults on create; the audio's content_type and length always come from the stored document. */
export function mediaDefaults(data: Data, existing?: StoredDoc): Data {
  const out: Data = { media_source: "upload", streamable: true, ...data };
  delete out.content_type;
  delete out.content_length;
  if (existing) {
    if (existing.data.content_type !== undefined) out.content_type = existing.data.content_type;
    if (existing.data.content_length !== undefined) out.content_length = existing.data.content_length;
  }
  return out;
}

export function mediaRow(doc: StoredDoc): Data {
  const d = doc.data;
  const row: Data = { id: doc.id, name: d.name, media_source: d.media_source };
  for (const key of ["language", "content_type", "is_prompt"]) if (d[key] !== undefined) row[key] = d[key];
  return row;
}

/** The attachment holding a media document's audio: there is at most one. */
function audioOf(doc: StoredDoc): string | undefined {
  return Object.keys(doc.attachments ?? {})[0];
}

function noAudio(id: string): ApiError {
  return new ApiError("bad_identifier", { cause: id, reason: "this media has no audio" });
}

function uploadFormat(contentType: string | undefined): AudioFormat {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  const format = UPLOAD_TYPES[type];
  if (!format) {
    throw fieldError("content_type", "enum", `media uploads take ${Object.keys(UPLOAD_TYPES).join(", ")}`, contentType ?? null);
  }
  return format;
}

/** `Accept: audio/...` (or `accept=audio/...`), but not a browser's catch-all. */
export function wantsAudio(accept: string): boolean {
  return accept.split(",").some((part) => part.trim().startsWith("audio/"));
}

export function registerMedia(app: FastifyInstance, deps: ApiDeps): void {
  registerDocResource(app, deps, {
    name: "media",
    collection: "media",
    schema: mediaSchema,
    verbs: { list: true, create: true, read: true, update: true, patch: true, delete: true },
    adminWrites: true,
    prepare: (data: Data, ctx: WriteCtx) => mediaDefaults(data, ctx.existing),
    check: (data: Data) => {
      // Text to speech has nothing to play without its text.
      const tts = data.tts as Data | undefined;
      if (data.media_source === "tts" && typeof tts?.text !== "string") throw fieldError("tts.text", "required", "Field is required but missing");
    },
    row: mediaRow,
    // The document's path also streams its audio to a client that asks for audio (Accept).
    readAs: async (_doc, ctx) => (wantsAudio(ctx.req.accept) ? download(ctx) : undefined),
  });

  const existing = async (ctx: Ctx): Promise<{ collection: Collection; doc: StoredDoc }> => {
    const collection = await deps.collection(ctx.params.account_id ?? "", "media");
    const id = ctx.params.id ?? "";
    const doc = collection.get(id);
    if (!doc) throw notFound(id);
    return { collection, doc };
  };

  const download = async (ctx: Ctx): Promise<"sent"> => {
    const { collection, doc } = await existing(ctx);
    const name = audioOf(doc);
    if (!name) throw noAudio(doc.id);
    const extension = name.includes(".") ? name.slice(name.lastIndexOf(".")) : "";
    return sendAttachment(ctx.request, ctx.reply, {
      collection,
      doc,
      name,
      filename: `${String(doc.data.name ?? doc.id)}${extension}`,
      inline: ctx.req.query.inline === "true",
    });
  };

  const upload = async (ctx: Ctx): Promise<Outcome> => {
    try {
      const { collection, doc } = await existing(ctx);
      const format = uploadFormat(ctx.request.headers["content-type"]);
      const body = ctx.request.body;
      if (!(body instanceof Readable)) throw fieldError("content_type", "enum", "the body must be the raw audio bytes", ctx.request.headers["content-type"]);
      const declared = Number(ctx.request.headers["content-length"]);
      if (declared > MAX_MEDIA_BYTES) {
        throw new ApiError("payload_too_large", { content_length: { maximum: { message: `uploads are limited to ${MAX_MEDIA_BYTES} bytes`, value: declared, target: MAX_MEDIA_BYTES } } });
      }
      const audio = guardUpload(body, {
        maxBytes: MAX_MEDIA_BYTES,
        sniffBytes: SNIFF_BYTES,
        sniff: (head) =>
          format.magic(head)
            ? undefined
            : new ApiError("invalid_data", { content_type: { magic: { message: `the bytes are not ${format.contentType}: expected ${format.expected}`, value: format.contentType } } }),
      });
      let stored = await collection.putAttachment(doc.id, format.attachment, audio, format.contentType, { rev: ifMatch(ctx.request) });
      // One audio per media: a new format replaces the old file rather than sitting beside it.
      for (const name of Object.keys(stored.attachments ?? {})) {
        if (name !== format.attachment) stored = await collection.deleteAttachment(doc.id, name);
      }
      const length = stored.attachments?.[format.attachment]?.length ?? 0;
      const updated = await collection.update(doc.id, { ...stored.data, content_type: format.contentType, content_length: length });
      return docOutcome(updated);
    } catch (err) {
      // The body may be partly unread; the client may still be sending, so end the connection.
      ctx.reply.header("Connection", "close");
      throw storeError(err);
    }
  };

  const removeAudio = async (ctx: Ctx): Promise<Outcome> => {
    const { collection, doc } = await existing(ctx);
    const name = audioOf(doc);
    if (!name) throw noAudio(doc.id);
    try {
      const stored = await collection.deleteAttachment(doc.id, name, { rev: ifMatch(ctx.request) });
      const data = { ...stored.data };
      delete data.content_type;
      delete data.content_length;
      return docOutcome(await collection.update(doc.id, data));
    } catch (err) {
      throw storeError(err);
    }
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/:id/raw",
    access: "account",
    tag: "media",
    verbs: {
      GET: { summary: "Download the audio of one media (Range honoured; inline=true to play in place)", handler: download },
      POST: { summary: "Upload the audio of one media as raw audio/wav or audio/mpeg bytes", admin: true, rawBody: true, handler: upload },
      DELETE: { summary: "Delete the audio of one media, keeping its document", admin: true, handler: removeAudio },
    },
  });
}
