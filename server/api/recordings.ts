// /v2/accounts/{account_id}/recordings: the call recordings the engine stored (calls/recording.ts),
// newest first, paged and filterable; one read as its document or, asked for audio, as the WAV.
//
// Reading is open to every user of the account; DELETE (the document and its audio file) needs an
// admin, since a recording may be what settles a dispute about a call.
import type { FastifyInstance } from "fastify";
import { cdrSortKey, RECORDINGS_COLLECTION } from "../calls/index.js";
import { sendAttachment } from "../http/binary.js";
import type { Ctx } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { registerDocResource, view, type Data } from "../http/resource.js";
import type { JsonSchema } from "../http/validation.js";
import type { StoredDoc } from "../store/index.js";
import type { ApiDeps } from "./deps.js";
import { wantsAudio } from "./media.js";

/** Recordings are never written through the API; the schema only describes them for the catalogue. */
const recordingSchema: JsonSchema = {
  type: "object",
  properties: {
    name: { type: "string" },
    call_id: { type: "string" },
    caller_id_name: { type: "string" },
    caller_id_number: { type: "string" },
    callee_id_name: { type: "string" },
    callee_id_number: { type: "string" },
    direction: { type: "string", enum: ["inbound", "outbound"] },
    duration_ms: { type: "integer" },
    start: { type: "integer", description: "Gregorian seconds" },
    media_type: { type: "string" },
    content_type: { type: "string" },
    origin: { type: "string" },
    owner_id: { type: "string" },
    source_type: { type: "string" },
  },
};

/** A list row: the document, plus the media types its audio can be fetched as. */
export function recordingRow(doc: StoredDoc): Data {
  const contentTypes = [...new Set(Object.values(doc.attachments ?? {}).map((a) => a.content_type))];
  return { ...view(doc), _read_only: { content_types: contentTypes } };
}

export function registerRecordings(app: FastifyInstance, deps: ApiDeps): void {
  const audio = async (doc: StoredDoc, ctx: Ctx): Promise<"sent"> => {
    const name = Object.keys(doc.attachments ?? {})[0];
    if (name === undefined) throw new ApiError("bad_identifier", { cause: doc.id, reason: "this recording has no audio" });
    return sendAttachment(ctx.request, ctx.reply, {
      collection: await deps.collection(ctx.params.account_id ?? "", RECORDINGS_COLLECTION),
      doc,
      name,
      filename: typeof doc.data.name === "string" && doc.data.name !== "" ? doc.data.name : `${doc.id}.wav`,
      inline: ctx.req.query.inline === "true",
    });
  };

  registerDocResource(app, deps, {
    name: "recordings",
    collection: RECORDINGS_COLLECTION,
    schema: recordingSchema,
    verbs: { list: true, read: true, delete: true },
    adminWrites: true,
    // Recordings carry the call's start in ms as CDRs do, so they share the newest-first key.
    sortKey: cdrSortKey,
    sortDescending: true,
    row: recordingRow,
    readAs: async (doc, ctx) => (wantsAudio(ctx.req.accept) ? audio(doc, ctx) : undefined),
    summaries: {
      list: "List call recordings, newest first",
      read: "Read one recording: its document, or its audio with Accept: audio/wav (Range honoured; inline=true to play in place)",
      delete: "Delete a recording and its audio (admin)",
    },
  });
}
