// /v2/accounts/{account_id}/media: prompts and music of an account, a metadata document plus
// its audio, uploaded, downloaded (with Range) and deleted as raw bytes at /media/{media_id}/raw.
import type { FastifyInstance } from "fastify";
import { Readable } from "node:stream";
import { guardUpload, sendAttachment } from "../http/binary.js";
import { ifMatch, registerEndpoint, type Ctx, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { mergePatch } from "../http/patch.js";
import { clientFields, dataObject, docOutcome, listOutcome, notFound, registerDocResource, storeError, type Data, type ResourceOps, type WriteCtx } from "../http/resource.js";
import { fieldError, type JsonSchema } from "../http/validation.js";
import type { Collection, StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";

export const MEDIA_SOURCES = ["upload", "recording", "tts"] as const;

/** Larger than any prompt or hold music an office needs; a bound so one upload cannot fill the disk. */
export const MAX_MEDIA_BYTES = 20 * 1024 * 1024;

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
  // Kazoo's schema defaults; a prompt's language is kept in lower case, as Kazoo keys prompts by it.
  const out: Data = { media_source: "upload", streamable: true, language: "en-us", ...data };
  if (typeof out.prompt_id === "string" && typeof out.language === "string") out.language = out.language.toLowerCase();
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
  // Kazoo's listing says of every media whether it is a prompt (one with a prompt_id).
  const row: Data = { id: doc.id, name: d.name, media_source: d.media_source, is_prompt: d.is_prompt === true || typeof d.prompt_id === "string" };
  for (const key of ["language", "content_type"]) if (d[key] !== undefined) row[key] = d[key];
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
  const format = UPLOAD_TYPES[mediaTypeOf(contentType)];
  if (!format) {
    throw fieldError("content_type", "enum", `media uploads take ${Object.keys(UPLOAD_TYPES).join(", ")}`, contentType ?? null);
  }
  return format;
}

/** `Accept: audio/...` (or `accept=audio/...`), but not a browser's catch-all. */
export function wantsAudio(accept: string): boolean {
  return accept.split(",").some((part) => part.trim().startsWith("audio/"));
}

/** A media's language as Kazoo's language view keys it: lower case; undefined when it has none. */
function languageOf(doc: StoredDoc): string | undefined {
  return typeof doc.data.language === "string" && doc.data.language !== "" ? doc.data.language.toLowerCase() : undefined;
}

function promptOf(doc: StoredDoc): string | undefined {
  return typeof doc.data.prompt_id === "string" ? doc.data.prompt_id : undefined;
}

/**
 * Kazoo's grouped count views as it answers them: one object of counts in a list, or an empty
 * list when nothing counts; documents `keyOf` gives no key are left out.
 */
function countsBy(docs: StoredDoc[], keyOf: (doc: StoredDoc) => string | undefined): Data[] {
  const counts: Record<string, number> = {};
  for (const doc of docs) {
    const key = keyOf(doc);
    if (key !== undefined) counts[key] = (counts[key] ?? 0) + 1;
  }
  return Object.keys(counts).length ? [counts] : [];
}

/** Raw audio bytes as they stream in, refused past the bound or when they are not `format`. */
function rawAudio(body: Readable, format: AudioFormat, declared: number): { format: AudioFormat; audio: Readable } {
  if (declared > MAX_MEDIA_BYTES) {
    throw new ApiError("payload_too_large", { content_length: { maximum: { message: `uploads are limited to ${MAX_MEDIA_BYTES} bytes`, value: declared, target: MAX_MEDIA_BYTES } } });
  }
  return { format, audio: guardUpload(body, { maxBytes: MAX_MEDIA_BYTES, sniffBytes: SNIFF_BYTES, sniff: (head) => wrongBytes(format, head) }) };
}

function wrongBytes(format: AudioFormat, head: Buffer): ApiError | undefined {
  if (format.magic(head)) return undefined;
  return new ApiError("invalid_data", { content_type: { magic: { message: `the bytes are not ${format.contentType}: expected ${format.expected}`, value: format.contentType } } });
}

/** Kazoo's base64 upload types: the body is the audio in base64, bare or as a data URI. */
const BASE64_TYPES = new Set(["application/base64", "application/x-base64"]);

/** What an upload may be sent as, for the OpenAPI document. */
const RAW_TYPES = [...Object.keys(UPLOAD_TYPES), "application/octet-stream", ...BASE64_TYPES];

/** The base64 text of the largest upload, with room for line breaks and a data URI's prefix. */
const MAX_BASE64_BYTES = Math.ceil((MAX_MEDIA_BYTES / 3) * 4 * 1.05) + 1024;

/** The media type of a Content-Type header, parameters dropped, in lower case. */
function mediaTypeOf(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/** A body the upload reads (and then names what it refuses): audio, base64, or bytes of no stated type. */
function isUploadType(contentType: string | undefined): boolean {
  const type = mediaTypeOf(contentType);
  return type.startsWith("audio/") || type === "application/octet-stream" || BASE64_TYPES.has(type);
}

function isBase64Type(contentType: string | undefined): boolean {
  return BASE64_TYPES.has(mediaTypeOf(contentType));
}

function undecodable(): ApiError {
  return new ApiError("validation_error", { file: { encoding: { message: "failed to decode base64 data" } } });
}

/**
 * Base64 text (`data:audio/mpeg;base64,...` or bare) decoded to one of the audio formats: the data
 * URI's media type names it, else the bytes do (a RIFF/WAVE header or an MP3's).
 */
function decodeBase64Audio(text: string): { format: AudioFormat; bytes: Buffer } {
  let payload = text.trim();
  let named: string | undefined;
  const uri = /^data:([^;,]*)((?:;[^;,]*)*),/i.exec(payload);
  if (uri) {
    if (!/;base64$/i.test(uri[2] ?? "")) throw undecodable();
    named = uri[1]?.trim().toLowerCase() || undefined;
    payload = payload.slice(uri[0].length);
  }
  const compact = payload.replace(/\s+/g, "");
  if (compact === "" || compact.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) throw undecodable();
  const bytes = Buffer.from(compact, "base64");
  if (bytes.length > MAX_MEDIA_BYTES) {
    throw new ApiError("payload_too_large", { content_length: { maximum: { message: `uploads are limited to ${MAX_MEDIA_BYTES} bytes`, value: bytes.length, target: MAX_MEDIA_BYTES } } });
  }
  const format = named !== undefined ? uploadFormat(named) : [WAV, MP3].find((candidate) => candidate.magic(bytes));
  if (!format) throw fieldError("content_type", "enum", `the decoded bytes are neither ${WAV.contentType} (${WAV.expected}) nor ${MP3.contentType} (${MP3.expected})`, null);
  const refusal = wrongBytes(format, bytes);
  if (refusal) throw refusal;
  return { format, bytes };
}

async function base64Audio(body: Readable): Promise<{ format: AudioFormat; audio: Buffer }> {
  const chunks: Buffer[] = [];
  for await (const chunk of guardUpload(body, { maxBytes: MAX_BASE64_BYTES, sniffBytes: 0, sniff: () => undefined })) chunks.push(Buffer.from(chunk as Uint8Array));
  const { format, bytes } = decodeBase64Audio(Buffer.concat(chunks).toString("latin1"));
  return { format, audio: bytes };
}

export function registerMedia(app: FastifyInstance, deps: ApiDeps): void {
  // The resource's own replace, captured to share its validate-then-write path: the item path
  // below is this file's, since its POST takes either the JSON envelope or the audio itself.
  let resource: ResourceOps | undefined;
  const replace = (ctx: Ctx, id: string): Promise<Outcome> => {
    if (!resource) throw new Error("media: the resource's operations are not registered yet");
    return resource.update(ctx, id);
  };
  // Base64 uploads reach the upload as a stream, like raw audio; any other endpoint answers them
  // 415, as it answers raw audio.
  app.addContentTypeParser(/^application\/(?:x-)?base64\s*(?:;|$)/i, (_request, payload, done) => done(null, payload));
  registerDocResource(app, deps, {
    name: "media",
    collection: "media",
    schema: mediaSchema,
    verbs: { list: true, create: true },
    adminWrites: true,
    prepare: (data: Data, ctx: WriteCtx) => mediaDefaults(data, ctx.existing),
    check: (data: Data) => {
      // Text to speech has nothing to play without its text.
      const tts = data.tts as Data | undefined;
      if (data.media_source === "tts" && typeof tts?.text !== "string") throw fieldError("tts.text", "required", "Field is required but missing");
    },
    row: mediaRow,
    collectionVerbs: (ops) => {
      resource = ops;
      return {};
    },
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
      const body = ctx.request.body;
      const declaredType = ctx.request.headers["content-type"];
      const rawFormat = isBase64Type(declaredType) ? undefined : uploadFormat(declaredType);
      if (!(body instanceof Readable)) throw fieldError("content_type", "enum", "the body must be the raw audio bytes", declaredType ?? null);
      const { format, audio } = rawFormat === undefined ? await base64Audio(body) : rawAudio(body, rawFormat, Number(ctx.request.headers["content-length"]));
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

  const readOne = async (ctx: Ctx): Promise<Outcome | "sent"> => {
    const { doc } = await existing(ctx);
    // The document's path also streams its audio to a client that asks for audio (Accept).
    return wantsAudio(ctx.req.accept) ? download(ctx) : docOutcome(doc);
  };

  // Kazoo's documented upload is a POST of the audio to the document's own path (`/raw` is its
  // older spelling); a JSON envelope, or no body, replaces the document.
  // Other bodies that are not JSON (plain text, form fields) are neither: 415, as on any document.
  const post = async (ctx: Ctx): Promise<Outcome> => {
    if (ctx.req.bodyKind !== "raw") return replace(ctx, ctx.params.id ?? "");
    const type = ctx.request.headers["content-type"];
    if (isUploadType(type)) return upload(ctx);
    ctx.reply.header("Connection", "close");
    throw new ApiError("unsupported_media_type", {
      content_type: { type: { message: "send the JSON envelope, or the audio (audio/wav, audio/mpeg or application/base64)", value: type ?? null } },
    });
  };

  const patch = async (ctx: Ctx): Promise<Outcome> => {
    const { doc } = await existing(ctx);
    return replace({ ...ctx, req: { ...ctx.req, data: mergePatch(clientFields(doc.data), dataObject(ctx)) } }, doc.id);
  };

  const remove = async (ctx: Ctx): Promise<Outcome> => {
    const { collection, doc } = await existing(ctx);
    try {
      return docOutcome(await collection.delete(doc.id, { rev: ifMatch(ctx.request) }));
    } catch (err) {
      throw storeError(err);
    }
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/:id",
    access: "account",
    tag: "media",
    verbs: {
      GET: { summary: "Read one media: its document, or its audio with Accept: audio/... (Range honoured; inline=true to play in place)", handler: readOne },
      POST: { summary: "Replace one media (JSON envelope), or upload its audio as raw audio/wav or audio/mpeg bytes", admin: true, rawBody: true, rawTypes: RAW_TYPES, body: mediaSchema, handler: post },
      PATCH: { summary: "Change some fields of one media", admin: true, handler: patch },
      DELETE: { summary: "Delete one media and its audio", admin: true, handler: remove },
    },
  });

  const mediaOf = (ctx: Ctx): Promise<Collection> => deps.collection(ctx.params.account_id ?? "", "media");

  /** The ids of the media `where` picks, paged like any list (Kazoo's id-only views). */
  const idList = async (ctx: Ctx, where: (doc: StoredDoc) => boolean): Promise<Outcome> => {
    const page = listOutcome(await mediaOf(ctx), ctx, { row: (doc) => ({ id: doc.id }), where });
    return { ...page, data: (page.data as Data[]).map((row) => row.id) };
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/languages",
    access: "account",
    tag: "media",
    verbs: {
      GET: {
        summary: "How many media each language has (`missing`: those without one)",
        handler: async (ctx) => ({ data: countsBy((await mediaOf(ctx)).all(), (doc) => languageOf(doc) ?? "missing") }),
      },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/languages/:language",
    access: "account",
    tag: "media",
    verbs: {
      GET: {
        summary: "The ids of the media in one language, compared without case (`missing`: those without one)",
        handler: async (ctx) => {
          const wanted = (ctx.params.language ?? "").toLowerCase();
          return idList(ctx, (doc) => (languageOf(doc) ?? "missing") === wanted);
        },
      },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/prompts",
    access: "account",
    tag: "media",
    verbs: {
      GET: {
        summary: "How many media (translations) each prompt id has",
        handler: async (ctx) => ({ data: countsBy((await mediaOf(ctx)).all(), promptOf) }),
      },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/prompts/:prompt_id",
    access: "account",
    tag: "media",
    verbs: {
      GET: {
        summary: "The media of one prompt id: {id, has_attachments} each",
        handler: async (ctx) => {
          const promptId = ctx.params.prompt_id ?? "";
          const page = listOutcome(await mediaOf(ctx), ctx, {
            row: (doc) => ({ id: doc.id, has_attachments: audioOf(doc) !== undefined }),
            where: (doc) => promptOf(doc) === promptId,
          });
          return page;
        },
      },
    },
  });

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/media/:id/raw",
    access: "account",
    tag: "media",
    verbs: {
      GET: { summary: "Download the audio of one media (Range honoured; inline=true to play in place)", handler: download },
      POST: { summary: "Upload the audio of one media as raw audio/wav or audio/mpeg bytes, or as base64 (application/base64: bare or a data URI)", admin: true, rawBody: true, rawTypes: RAW_TYPES, handler: upload },
      DELETE: { summary: "Delete the audio of one media, keeping its document", admin: true, handler: removeAudio },
    },
  });
}
