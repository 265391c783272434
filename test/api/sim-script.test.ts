// The simulated caller's script as the API takes it: every malformed script is refused with a 400
// naming the field and the rule, and starts no call; espeak-ng's refusal of a voice is the
// request's 400 too; only admins may start a scripted caller. No call is placed here (no media).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApi, type TestApi } from "../helpers/api.js";

let api: TestApi;
let token: string;
let base: string;

beforeAll(async () => {
  api = await startApi();
  const login = await api.login("admin");
  token = login.token;
  base = `/v2/accounts/${login.accountId}`;
});
afterAll(async () => {
  await api?.close();
});

const caller = { to: "1002", caller_id_number: "+14155550100" };
const start = (data: Record<string, unknown>, as: string | null = token) => api.call("POST", `${base}/sim/calls`, { token: as, data: { ...caller, ...data } });
const refusal = async (script: unknown, extra: Record<string, unknown> = {}) => {
  const res = await start({ script, ...extra });
  return { status: res.status, message: res.body.message, data: res.body.data };
};

describe("a simulated caller's script", () => {
  it("is refused with the field and the rule when malformed, and no call starts", async () => {
    const cases: [unknown, string, string][] = [
      [{}, "script.steps", "required"],
      [{ steps: [], mood: "angry" }, "script.mood", "additionalProperties"],
      [{ steps: "say hello" }, "script.steps", "type"],
      [{ steps: [{}] }, "script.steps.0", "step"],
      [{ steps: [{ say: "Hi", digits: "1" }] }, "script.steps.0", "step"],
      [{ steps: [{ digits: "1", language: "fr" }] }, "script.steps.0.language", "step"],
      [{ steps: [{ say: "Hi", after_s: 2 }] }, "script.steps.0.after_s", "step"],
      [{ steps: [{ play: "tone_stream://440", media: "tone_stream://440" }] }, "script.steps.0.media", "step"],
      [{ steps: [{ hangup: false }] }, "script.steps.0.hangup", "enum"],
      [{ steps: [{ wait_s: -1 }] }, "script.steps.0.wait_s", "minimum"],
      [{ steps: [{ digits: "12x" }] }, "script.steps.0.digits", "pattern"],
      [{ steps: [{ say: "" }] }, "script.steps.0.say", "minLength"],
      [{ steps: [{ say: "Hi", voice: "f3; rm -rf" }] }, "script.steps.0.voice", "pattern"],
      [{ steps: [], language: "english please" }, "script.language", "pattern"],
      [{ steps: [], patience_s: 100_000 }, "script.patience_s", "maximum"],
      [{ steps: [], asks_for_supervisor: "yes" }, "script.asks_for_supervisor", "type"],
      [{ steps: [{ hangup: true }], talk_s: 30 }, "script.talk_s", "conflict"],
      [{ steps: [{ play: "https://example.com/line.wav" }] }, "script.steps.0.play", "format"],
      [{ steps: [{ play: "f".repeat(32) }] }, "script.steps.0.play", "not_found"],
      [{ steps: [{ say: "Hello?", media: "https://example.com/hello.wav" }] }, "script.steps.0.media", "format"],
    ];
    for (const [script, field, rule] of cases) {
      const res = await refusal(script);
      expect(res, JSON.stringify(script)).toMatchObject({ status: 400, message: "validation error", data: { [field]: { [rule]: { message: expect.any(String) } } } });
    }
    expect(await refusal({ steps: [] }, { audio: "tone_stream://440" })).toMatchObject({ status: 400, data: { script: { conflict: expect.any(Object) } } });
    expect(api.server.calls.channels.size).toBe(0);
    // Nothing was rendered for a refused script.
    expect(existsSync(join(api.dataDir, "speech"))).toBe(false);
  });

  it("answers 400 when espeak-ng refuses the line's voice, with espeak-ng's reason", async () => {
    const res = await refusal({ steps: [{ say: "Hello there, I need some help.", voice: "nosuchvariant" }], language: "xx-QQ" });
    expect(res).toMatchObject({ status: 400, data: { "script.steps.0.say": { synthesis: { value: "Hello there, I need some help." } } } });
    expect(JSON.stringify(res.data)).toMatch(/espeak-ng failed/);
    expect(api.server.calls.channels.size).toBe(0);
  });

  it("may be started by admins only", async () => {
    const agent = await api.login("agent2");
    const script = { steps: [{ say: "Hello?" }] };
    expect((await start({ script }, agent.token)).status).toBe(403);
    expect((await start({ script }, null)).status).toBe(401);
    expect(api.server.calls.channels.size).toBe(0);
  });
});
