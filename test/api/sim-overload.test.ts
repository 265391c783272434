// A simulated caller asked for while the media engine is refusing new calls (issue 17,
// "Capacity": a clear refusal before quality collapses): the API answers 503 in the error
// envelope with Retry-After and the reason, and starts nothing: no caller, no channel, no CDR.
// The frame clock runs on a hand-moved time source whose ticks the test makes late, and the
// server's CPU is read from a meter the test sets (busy: 2 cores), as in
// test/calls/media-overload.test.ts; no real load and no timing assert.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";
import { busyCpu, LateTime } from "../helpers/late-time.js";

let api: TestApi;
let token: string;
let base: string;
const time = new LateTime();
/** The server's CPU: 2 cores' worth every second, a second passing between two reads. */
const cpu = busyCpu(2);
/** A call in progress keeps the frame clock running (its ticks are what the load check reads). */
let stopCallInProgress: () => void = () => undefined;

beforeAll(async () => {
  api = await startApi({ config: { media: { frameClock: { time }, load: { cpu, busyCores: 1.6 } } } });
  const login = await api.login("admin");
  token = login.token;
  base = `/v2/accounts/${login.accountId}`;
  stopCallInProgress = api.server.calls.context.media.clock.subscribe(() => undefined);
});
afterAll(async () => {
  stopCallInProgress();
  await api?.close();
});

const startCaller = () =>
  api.call("POST", `${base}/sim/calls`, { token, data: { to: "5001", caller_id_number: "+14155550100", audio: "tone_stream://%(1000,0,440)" } });

describe("POST /sim/calls while the media engine is overloaded", () => {
  it("answers 503 with Retry-After and the reason, and starts no caller, channel or CDR", async () => {
    time.run(45, 2);
    time.run(5, 60);
    const cdrsBefore = (await api.call<unknown[]>("GET", `${base}/cdrs`, { token })).body.data.length;
    const res = await startCaller();
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("5");
    expect(res.body).toMatchObject({
      status: "error",
      error: "503",
      message: "service_unavailable",
      data: { retry_after_s: 5 },
    });
    const data = res.body.data as { message?: unknown };
    expect(data.message).toMatch(/^the media engine takes no new call now: media engine overloaded: 5 of the last 50 frame-clock ticks ran more than 40 ms late/);
    expect((await api.call<unknown[]>("GET", `${base}/sim/calls`, { token })).body.data).toEqual([]);
    expect(api.server.calls.channels.size).toBe(0);
    expect((await api.call<unknown[]>("GET", `${base}/cdrs`, { token })).body.data).toHaveLength(cdrsBefore);
  });

  it("starts the caller again once the clock is back on time", async () => {
    time.run(46, 2);
    const res = await startCaller();
    expect(res.status).toBe(201);
    const id = (res.body.data as { id: string }).id;
    const hangup = await api.call("POST", `${base}/sim/calls/${id}`, { token, data: { action: "hangup" } });
    expect(hangup.status).toBe(202);
  });
});
