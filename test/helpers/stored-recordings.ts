// Recordings stored the way the call engine stores them (a document in the month's recordings
// collection, its WAV attached beside it), for tests that read recordings back without a call.
import { RECORDING_ATTACHMENT } from "../../server/calls/index.js";
import { toGregorianSeconds } from "../../server/clock.js";
import type { Collection } from "../../server/store/index.js";

/**
 * Recording `n` of an inbound call from Casey Customer to Alex Agent, started `n` seconds after
 * noon on 1 January 2026; `fields` are laid over it; `audio` (a WAV) is attached unless null.
 */
export async function storeRecording(recordings: Collection, n: number, fields: Record<string, unknown>, audio: Buffer | null): Promise<string> {
  const started = Date.UTC(2026, 0, 1, 12, 0, n);
  const doc = await recordings.create(
    {
      name: `call_recording_call-${n}.wav`,
      call_id: `call-${n}`,
      caller_id_name: "Casey Customer",
      caller_id_number: "+14155550100",
      callee_id_name: "Alex Agent",
      callee_id_number: "1002",
      duration_ms: 20,
      start: toGregorianSeconds(started),
      media_type: "wav",
      content_type: "audio/wav",
      origin: "inbound from offnet to user",
      source_type: "kz_media_recording",
      pvt_started_ms: started,
      ...fields,
    },
    { modb: true },
  );
  if (audio !== null) await recordings.putAttachment(doc.id, RECORDING_ATTACHMENT, audio, "audio/wav");
  return doc.id;
}
