// /v2/accounts/{account_id}/recordings: the call recordings the engine stored (calls/recording.ts),
// newest first, paged and filterable; one read as its document or, asked for audio, as the WAV.
//
// Who sees which: an admin (and an API key) every recording of the account; any other user those
// of the interactions they took part in (their own phone was in one of its recorded calls: the
// call they took, the colleague they transferred it to or took it from); a supervisor (a user
// with the call_monitor permission) also those of the interactions that came through a queue they
// are a member of. A list just leaves the others out; reading one that is not theirs is 403, as is
// reading an id that does not exist, so a user learns nothing about recordings they may not hear
// (the hosted service checks permissions before it looks the document up).
//
// DELETE (the document and its audio file) needs an admin, since a recording may be what settles
// a dispute about a call.
import type { FastifyInstance } from "fastify";
import { cdrSortKey, RECORDINGS_COLLECTION } from "../calls/index.js";
import { sendAttachment } from "../http/binary.js";
import { ifMatch, registerEndpoint, type AuthContext, type Ctx } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { docOutcome, listOutcome, notFound, storeError, view, type Data } from "../http/resource.js";
import type { Collection, StoredDoc } from "../store/index.js";
import { hasCallMonitor, membersOf } from "./callq-queues.js";
import type { ApiDeps } from "./deps.js";
import { wantsAudio } from "./media.js";

/** Whose recordings a token may see: all of them, or those touching this user or these queues. */
type Viewer = { all: true } | { all: false; userId: string; queueIds: ReadonlySet<string> };

/** The users and queues of one interaction (or of a lone recording without one). */
interface Reach {
  users: Set<string>;
  queues: Set<string>;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The users a recording names: those whose phones were in the call, and its owner. */
function usersOf(doc: StoredDoc): string[] {
  const ids = Array.isArray(doc.data.pvt_user_ids) ? doc.data.pvt_user_ids.filter((id): id is string => typeof id === "string") : [];
  const owner = text(doc.data.owner_id);
  return owner === undefined ? ids : [...ids, owner];
}

/** A recording's reach: that of its whole interaction, so every part of a transferred call goes together. */
function reachOf(recordings: Collection): (doc: StoredDoc) => Reach {
  const byInteraction = new Map<string, Reach>();
  for (const doc of recordings.all()) {
    const id = text(doc.data.interaction_id);
    if (id === undefined) continue;
    const reach = byInteraction.get(id) ?? { users: new Set<string>(), queues: new Set<string>() };
    for (const user of usersOf(doc)) reach.users.add(user);
    const queue = text(doc.data.queue_id);
    if (queue !== undefined) reach.queues.add(queue);
    byInteraction.set(id, reach);
  }
  return (doc) => {
    const id = text(doc.data.interaction_id);
    const shared = id === undefined ? undefined : byInteraction.get(id);
    if (shared) return shared;
    const queue = text(doc.data.queue_id);
    return { users: new Set(usersOf(doc)), queues: new Set(queue === undefined ? [] : [queue]) };
  };
}

function visibleTo(viewer: Viewer, recordings: Collection): (doc: StoredDoc) => boolean {
  if (viewer.all) return () => true;
  const reach = reachOf(recordings);
  return (doc) => {
    const { users, queues } = reach(doc);
    return users.has(viewer.userId) || [...queues].some((queue) => viewer.queueIds.has(queue));
  };
}

/** A list row: the document, plus the media types its audio can be fetched as. */
export function recordingRow(doc: StoredDoc): Data {
  const contentTypes = [...new Set(Object.values(doc.attachments ?? {}).map((a) => a.content_type))];
  return { ...view(doc), _read_only: { content_types: contentTypes } };
}

export function registerRecordings(app: FastifyInstance, deps: ApiDeps): void {
  const accountOf = (ctx: Ctx): string => ctx.params.account_id ?? "";
  const recordingsOf = (ctx: Ctx): Promise<Collection> => deps.collection(accountOf(ctx), RECORDINGS_COLLECTION);

  const viewerOf = async (ctx: Ctx): Promise<Viewer> => {
    const auth: AuthContext | null = ctx.auth;
    if (!auth) throw new ApiError("invalid_credentials");
    if (auth.isAdmin || auth.ownerId === null) return { all: true };
    const userId = auth.ownerId;
    const user = (await deps.collection(accountOf(ctx), "users")).get(userId);
    if (!hasCallMonitor(user)) return { all: false, userId, queueIds: new Set() };
    const queues = (await deps.collection(accountOf(ctx), "callq_queues")).all();
    return { all: false, userId, queueIds: new Set(queues.filter((q) => membersOf(q.data).includes(userId)).map((q) => q.id)) };
  };

  /** The recording in the path, if this token may see it: 404 only for those who may see everything. */
  const visibleDoc = async (ctx: Ctx): Promise<StoredDoc> => {
    const id = ctx.params.id ?? "";
    const viewer = await viewerOf(ctx);
    const recordings = await recordingsOf(ctx);
    const doc = recordings.get(id);
    if (viewer.all) {
      if (!doc) throw notFound(id);
      return doc;
    }
    if (!doc || !visibleTo(viewer, recordings)(doc)) {
      throw new ApiError("forbidden", { recording: { not_yours: { message: "only recordings of calls you took part in (or, for a supervisor, of your queues' calls)" } } });
    }
    return doc;
  };

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

  const base = "/v2/accounts/:account_id/recordings";
  registerEndpoint(app, deps, {
    path: base,
    access: "account",
    tag: "recordings",
    verbs: {
      GET: {
        summary: "List call recordings, newest first: all for an admin, else those of calls you took part in (and your queues', for a supervisor)",
        handler: async (ctx) => {
          const recordings = await recordingsOf(ctx);
          const where = visibleTo(await viewerOf(ctx), recordings);
          // Recordings carry the call's start in ms as CDRs do, so they share the newest-first key.
          return listOutcome(recordings, ctx, { sortKey: cdrSortKey, descending: true, row: recordingRow, where });
        },
      },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/recordings",
    access: "account",
    tag: "recordings",
    verbs: {
      GET: {
        summary: "List the recordings of the calls a user's phones were in, newest first, among those you may see",
        handler: async (ctx) => {
          const userId = ctx.params.id ?? "";
          if (!(await deps.collection(accountOf(ctx), "users")).has(userId)) throw notFound(userId);
          const recordings = await recordingsOf(ctx);
          const visible = visibleTo(await viewerOf(ctx), recordings);
          const where = (doc: StoredDoc): boolean => usersOf(doc).includes(userId) && visible(doc);
          return listOutcome(recordings, ctx, { sortKey: cdrSortKey, descending: true, row: recordingRow, where });
        },
      },
    },
  });
  registerEndpoint(app, deps, {
    path: `${base}/:id`,
    access: "account",
    tag: "recordings",
    verbs: {
      GET: {
        summary: "Read one recording: its document, or its audio with Accept: audio/wav (Range honoured; inline=true to play in place)",
        handler: async (ctx) => {
          const doc = await visibleDoc(ctx);
          if (wantsAudio(ctx.req.accept)) return audio(doc, ctx);
          return { data: view(doc), revision: doc.rev };
        },
      },
      DELETE: {
        summary: "Delete a recording and its audio (admin)",
        admin: true,
        handler: async (ctx) => {
          const doc = await visibleDoc(ctx);
          try {
            return docOutcome(await (await recordingsOf(ctx)).delete(doc.id, { rev: ifMatch(ctx.request) }));
          } catch (err) {
            throw storeError(err);
          }
        },
      },
    },
  });
}
