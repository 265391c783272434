// A simulated caller for console tests, started through the API and read back by id: on an
// in-process server (simCallsOf, which can also await the server until no call is left) or on a
// serve-mode one reached only over HTTP (simCallsAt, signed in as the demo admin).
import { expect } from "vitest";
import type { TestApi } from "./api.js";
import { poll } from "./poll.js";
import { demoGrant } from "./serve.js";

/** A 1,200 Hz tone, on for a second and off for none: what a caller says unless a test picks. */
export const CALLER_AUDIO = "tone_stream://%(1000,0,1200)";

export interface SimCalls {
  /** Starts a caller to `to` (default 1002, agent1) saying `audio` (default CALLER_AUDIO); its id. */
  start(name: string, number: string, to?: string, audio?: string): Promise<string>;
  /** The caller's state, or undefined once the server no longer lists it. */
  state(id: string): Promise<string | undefined>;
}

export interface SimCallsOf extends SimCalls {
  /** Until the server has no call left (the agent's leg and the caller's both gone). */
  noneLeft(): Promise<void>;
}

/** One request to the account's API: its status and, when it answered JSON, the envelope's data. */
type Request = (method: "GET" | "POST", path: string, data?: unknown) => Promise<{ status: number; data: unknown; text: string }>;

function simCalls(request: Request, accountId: string): SimCalls {
  return {
    async start(name, number, to = "1002", audio = CALLER_AUDIO) {
      const res = await request("POST", `/v2/accounts/${accountId}/sim/calls`, { to, caller_id_name: name, caller_id_number: number, audio });
      expect(res.status, res.text).toBe(201);
      return (res.data as { id: string }).id;
    },
    async state(id) {
      const res = await request("GET", `/v2/accounts/${accountId}/sim/calls/${id}`);
      return res.status === 200 ? (res.data as { state: string }).state : undefined;
    },
  };
}

/** Callers on the in-process server of `api`, as `token`'s user of `accountId`. */
export function simCallsOf(api: TestApi, token: string, accountId: string): SimCallsOf {
  const request: Request = async (method, path, data) => {
    const res = await api.call(method, path, { token, data });
    return { status: res.status, data: res.body.data, text: res.text };
  };
  return {
    ...simCalls(request, accountId),
    async noneLeft() {
      await poll("the calls to end on the server", async () => (api.server.calls?.channels.size === 0 ? true : undefined));
    },
  };
}

/** Callers on the server at `url` (serve mode: another process), started as the demo admin. */
export async function simCallsAt(url: string): Promise<SimCalls> {
  const { token, accountId } = await demoGrant(url);
  const request: Request = async (method, path, data) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { "Content-Type": "application/json", "X-Auth-Token": token },
      body: data === undefined ? undefined : JSON.stringify({ data }),
    });
    const text = await res.text();
    const json = res.headers.get("content-type")?.includes("json") === true ? (JSON.parse(text) as { data?: unknown }) : {};
    return { status: res.status, data: json.data, text };
  };
  return simCalls(request, accountId);
}
