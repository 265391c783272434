// A simulated caller on an in-process server, for console tests: started through the API, read
// back by id, and the server awaited until no call is left.
import { expect } from "vitest";
import type { TestApi } from "./api.js";
import { poll } from "./poll.js";

export interface SimCallsOf {
  /** Starts a caller to `to` (default 1002, agent1) saying a 1,200 Hz tone; its id. */
  start(name: string, number: string, to?: string): Promise<string>;
  /** The caller's state, or undefined once the server no longer lists it. */
  state(id: string): Promise<string | undefined>;
  /** Until the server has no call left (the agent's leg and the caller's both gone). */
  noneLeft(): Promise<void>;
}

export function simCallsOf(api: TestApi, token: string, accountId: string): SimCallsOf {
  return {
    async start(name, number, to = "1002") {
      const res = await api.call<{ id: string }>("POST", `/v2/accounts/${accountId}/sim/calls`, {
        token,
        data: { to, caller_id_name: name, caller_id_number: number, audio: "tone_stream://%(1000,0,1200)" },
      });
      expect(res.status, res.text).toBe(201);
      return res.body.data.id;
    },
    async state(id) {
      const res = await api.call<{ state: string }>("GET", `/v2/accounts/${accountId}/sim/calls/${id}`, { token });
      return res.status === 200 ? res.body.data.state : undefined;
    },
    async noneLeft() {
      await poll("the calls to end on the server", async () => (api.server.calls?.channels.size === 0 ? true : undefined));
    },
  };
}
