// The recordings endpoints as the console uses them: a filtered page of recordings, deleting one,
// and the URLs its audio plays and downloads from (Accept as a query, so Range works natively).
import { accountList, accountMediaUrl, accountPage, accountRequest, type AccountConnection, type Page } from "./account.js";

/** A recordings list row (fidelity.md, Recordings); fields the server may leave out are optional. */
export interface Recording {
  id: string;
  name?: string;
  call_id?: string;
  caller_id_name?: string;
  caller_id_number?: string;
  callee_id_name?: string;
  callee_id_number?: string;
  direction?: "inbound" | "outbound";
  duration_ms?: number;
  /** Gregorian seconds. */
  start?: number;
  content_type?: string;
  origin?: string;
  owner_id?: string;
  queue_id?: string;
  /** Shared by the recordings of one customer interaction (the parts of a transferred call). */
  interaction_id?: string;
  _read_only?: { content_types?: string[] };
}

export interface RecordingsQuery {
  pageSize: number;
  startKey?: string;
  /** Query-string filters (filter_*, created_from / created_to). */
  filters: Record<string, string>;
}

/** What the recordings slice needs from the server, so tests can hand it a fake. */
export interface RecordingsApi {
  list(connection: AccountConnection, query: RecordingsQuery): Promise<Page<Recording>>;
  remove(connection: AccountConnection, id: string): Promise<void>;
  /** The account's call queues, for the queue filter. */
  queues(connection: AccountConnection): Promise<{ id: string; name?: string }[]>;
}

export const httpRecordingsApi: RecordingsApi = {
  list: (connection, query) =>
    accountPage<Recording>(connection, "/recordings", {
      pageSize: query.pageSize,
      params: query.filters,
      ...(query.startKey === undefined ? {} : { startKey: query.startKey }),
    }),
  async remove(connection, id) {
    await accountRequest<unknown>(connection, "DELETE", `/recordings/${encodeURIComponent(id)}`);
  },
  queues: (connection) => accountList<{ id: string; name?: string }>(connection, "/callq_queues"),
};

/** The audio's media type: the first the server lists for the recording, else WAV. */
export function recordingMediaType(recording: Recording): string {
  return recording._read_only?.content_types?.[0] ?? recording.content_type ?? "audio/wav";
}

/** Where the audio plays from (inline) or downloads from (as an attachment). */
export function recordingAudioUrl(connection: AccountConnection, recording: Recording, use: "play" | "download"): string {
  return accountMediaUrl(connection, `/recordings/${encodeURIComponent(recording.id)}`, {
    accept: recordingMediaType(recording),
    inline: use === "play" ? "true" : "false",
  });
}
