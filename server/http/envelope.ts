// The response envelope of the hosted API: `{status:"success", data, revision, request_id,
// auth_token, timestamp}` plus the paging keys on lists.
import { createHash } from "node:crypto";

export interface Paging {
  page_size: number;
  start_key?: string;
  next_start_key?: string;
}

export interface SuccessEnvelope {
  status: "success";
  data: unknown;
  revision: string;
  request_id: string;
  auth_token: string;
  timestamp: string;
  page_size?: number;
  start_key?: string;
  next_start_key?: string;
}

export function successEnvelope(options: {
  data: unknown;
  revision?: string;
  requestId: string;
  authToken: string | null;
  now: Date;
  paging?: Paging;
}): SuccessEnvelope {
  return {
    status: "success",
    data: options.data,
    revision: options.revision ?? contentRevision(options.data),
    request_id: options.requestId,
    auth_token: options.authToken ?? "",
    timestamp: options.now.toISOString(),
    ...options.paging,
  };
}

/** A stable revision for a response that is not one document: the md5 of its content. */
export function contentRevision(data: unknown): string {
  return createHash("md5").update(JSON.stringify(data ?? null)).digest("hex");
}
