// Kazoo's documents' examples as their curl lines send them: exactly the headers and body
// written, nothing added (no Content-Type unless the line has `-H "Content-Type: ..."`).
import { expect } from "vitest";

export interface CurlResult {
  status: number;
  headers: Headers;
  text: string;
  /** The body read as JSON; {} when empty, and {} (with `text` kept) when not JSON. */
  json: Record<string, unknown>;
}

/** One curl line: `method` on `baseUrl + path`, these headers, this body. */
export async function curl(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Uint8Array): Promise<CurlResult> {
  // As bytes: fetch would add `Content-Type: text/plain` to a string body, which curl does not.
  const res = await fetch(`${baseUrl}${path}`, { method, headers, body: typeof body === "string" ? Buffer.from(body) : body });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  if (text !== "") {
    try {
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
    } catch {
      json = {};
    }
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** Kazoo's success envelope around `data` (matched as a subset). */
export function expectSuccess(res: CurlResult, status: number, data?: unknown): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ status: "success", request_id: expect.any(String), revision: expect.any(String) });
  if (data !== undefined) expect(res.json["data"]).toMatchObject(data as Record<string, unknown>);
}

/** Kazoo's error envelope: `error` is the status as a string, `message` the error word. */
export function expectError(res: CurlResult, status: number, message: string, data?: unknown): void {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ status: "error", error: String(status), message, request_id: expect.any(String) });
  if (data !== undefined) expect(res.json["data"]).toMatchObject(data as Record<string, unknown>);
}
