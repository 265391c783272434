// Binary bodies in and out of the API: `Range: bytes=...` against a file's size, streaming a
// stored attachment (200, 206 + Content-Range, 416), and a guard for uploads (size, magic bytes).
import { once } from "node:events";
import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Collection, StoredDoc } from "../store/index.js";
import { ApiError } from "./errors.js";

/** What a Range header asks of a file of a given size; `end` is inclusive. */
export type RangeRequest = { kind: "whole" } | { kind: "partial"; start: number; end: number } | { kind: "unsatisfiable" };

const WHOLE: RangeRequest = { kind: "whole" };

/**
 * RFC 9110 section 14: a server may ignore a Range it cannot or will not serve, so anything other
 * than one well-formed byte range (another unit, bad syntax, last < first, several ranges, which
 * would need multipart/byteranges) is the whole file. Only a well-formed range that starts past
 * the end (or an empty suffix, or any range of an empty file) is unsatisfiable.
 */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return WHOLE;
  const m = /^\s*bytes\s*=(.*)$/i.exec(header);
  if (!m) return WHOLE;
  const specs = (m[1] ?? "").split(",").map((s) => s.trim()).filter((s) => s !== "");
  if (specs.length !== 1) return WHOLE;
  const spec = specs[0] ?? "";
  const suffix = /^-(\d+)$/.exec(spec);
  if (suffix) {
    const length = Number(suffix[1]);
    if (length === 0 || size === 0) return { kind: "unsatisfiable" };
    return { kind: "partial", start: Math.max(0, size - length), end: size - 1 };
  }
  const span = /^(\d+)-(\d*)$/.exec(spec);
  if (!span) return WHOLE;
  const start = Number(span[1]);
  const last = span[2] === "" || span[2] === undefined ? Infinity : Number(span[2]);
  if (last < start) return WHOLE;
  if (start >= size) return { kind: "unsatisfiable" };
  return { kind: "partial", start, end: Math.min(last, size - 1) };
}

/**
 * If-Range lets a resuming client say "only if it is still this version". Only a strong entity
 * tag can match; a date or a weak tag cannot, and then the whole file is sent, which is safe.
 */
export function ifRangeHolds(ifRange: string | undefined, etag: string): boolean {
  if (ifRange === undefined) return true;
  return ifRange.trim() === `"${etag}"`;
}

/**
 * `attachment; filename="..."`, with an RFC 8187 `filename*` when the name is not plain ASCII;
 * the quoted fallback never carries quotes, backslashes, control characters or line breaks.
 */
export function contentDisposition(inline: boolean, filename: string): string {
  const kind = inline ? "inline" : "attachment";
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  if (fallback === filename) return `${kind}; filename="${filename}"`;
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

export interface AttachmentDownload {
  collection: Collection;
  doc: StoredDoc;
  /** The attachment's name on the document. */
  name: string;
  /** The name the client is told to save it as. */
  filename: string;
  inline: boolean;
}

/**
 * Streams one attachment of a document with Content-Type, Content-Length and Accept-Ranges,
 * honouring Range (206 + Content-Range, or 416 + `Content-Range: bytes *\/size`) and If-Range
 * against the document's revision, which is also the ETag.
 */
export async function sendAttachment(request: FastifyRequest, reply: FastifyReply, download: AttachmentDownload): Promise<"sent"> {
  const { collection, doc, name } = download;
  const meta = doc.attachments?.[name];
  if (!meta) throw new ApiError("bad_identifier", { cause: doc.id });
  const size = meta.length;
  const rangeHeader = ifRangeHolds(header(request, "if-range"), doc.rev) ? header(request, "range") : undefined;
  const range = parseRange(rangeHeader, size);
  reply
    .header("Accept-Ranges", "bytes")
    .header("ETag", `"${doc.rev}"`)
    .header("Content-Disposition", contentDisposition(download.inline, download.filename));
  if (range.kind === "unsatisfiable") {
    reply.status(416).header("Content-Range", `bytes */${size}`).header("Content-Length", "0").send();
    return "sent";
  }
  const { stream } = collection.readAttachment(doc.id, name, range.kind === "partial" ? range : undefined);
  // Wait for the file to open so a missing file is an error answer, not a cut-off 200.
  await once(stream, "ready");
  if (range.kind === "partial") reply.status(206).header("Content-Range", `bytes ${range.start}-${range.end}/${size}`);
  const length = range.kind === "partial" ? range.end - range.start + 1 : size;
  reply.type(meta.content_type).header("Content-Length", String(length)).send(stream);
  return "sent";
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value : undefined;
}

export interface UploadGuardOptions {
  /** More bytes than this fail the stream with 413. */
  maxBytes: number;
  /** How many leading bytes `sniff` needs (fewer if the body is shorter). */
  sniffBytes: number;
  /** A refusal when the leading bytes are not what the content type claims. */
  sniff(head: Buffer): ApiError | undefined;
}

/**
 * The upload as a stream that fails with 413 past `maxBytes` and with the sniff's refusal before
 * its first byte passes, so a writer behind it stops at once and keeps nothing. It reads the
 * source only as it is read itself, so no failure can fire before the writer listens. The source
 * is left alone on failure, never destroyed: destroying a request destroys its socket, and the
 * client would never see the error answer. Send `Connection: close` with that answer instead.
 */
export function guardUpload(source: Readable, options: UploadGuardOptions): Readable {
  return Readable.from(guarded(source.iterator({ destroyOnReturn: false }), options), { objectMode: false });
}

async function* guarded(chunks: AsyncIterable<Buffer>, options: UploadGuardOptions): AsyncGenerator<Buffer> {
  let received = 0;
  let head: Buffer[] = [];
  let sniffed = false;
  const release = (): Buffer => {
    const bytes = Buffer.concat(head);
    head = [];
    sniffed = true;
    const refusal = options.sniff(bytes);
    if (refusal) throw refusal;
    return bytes;
  };
  for await (const chunk of chunks) {
    received += chunk.length;
    if (received > options.maxBytes) {
      throw new ApiError("payload_too_large", {
        content_length: { maximum: { message: `uploads are limited to ${options.maxBytes} bytes`, target: options.maxBytes } },
      });
    }
    if (sniffed) {
      yield chunk;
      continue;
    }
    head.push(chunk);
    if (received >= options.sniffBytes) yield release();
  }
  if (!sniffed) yield release();
}
