// A bridged, monitored and recorded call over real werift legs on 127.0.0.1: the server's
// caller and agent legs mixed, a supervisor switched live between eavesdrop, whisper and barge.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine, toneShare, type WebRtcLeg } from "../../server/media/index.js";
import { parseWav } from "../../server/media/wav.js";
import { frameWiseShare, heardTone } from "../helpers/tone-windows.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function pair(engine: MediaEngine, name: string): Promise<{ far: WebRtcLeg; server: WebRtcLeg }> {
  const far = engine.createLeg({ id: `${name}-phone` });
  const server = engine.createLeg({ id: name });
  await far.acceptAnswer(await server.acceptOffer(await far.createOffer()));
  while (far.state !== "connected" || server.state !== "connected") await sleep(10);
  return { far, server };
}

/** Share of each tone in what `leg` receives over `ms`, after `settleMs` for in-flight audio. */
async function hears(engine: MediaEngine, leg: WebRtcLeg, ms = 500): Promise<Record<440 | 1000 | 2000, number>> {
  await sleep(120);
  const samples: number[] = [];
  const stop = engine.clock.subscribe((tick) => samples.push(...leg.incoming.read(tick)));
  await sleep(ms);
  stop();
  // Over the frames played: a frame of silence where a receive buffer ran dry on a loaded machine
  // shifts the tone's phase and would take a share over the whole window with it (tone-windows.ts).
  return { 440: heardTone(samples, 440).share, 1000: heardTone(samples, 1000).share, 2000: heardTone(samples, 2000).share };
}

describe("a bridged call over werift legs", () => {
  // The phones share this process and its stalls with the server's legs: no leg drops late
  // frames, which would only cut gaps into what the phones and the recording hear.
  const engine = new MediaEngine({ maxSendLatenessMs: Infinity });
  const dir = mkdtempSync(join(tmpdir(), "bridge-loop-"));
  const mixer = engine.mixer();
  const recorder = engine.recorder(join(dir, "call.wav"));
  let caller: Awaited<ReturnType<typeof pair>>;
  let agent: Awaited<ReturnType<typeof pair>>;
  let supervisor: Awaited<ReturnType<typeof pair>>;

  beforeAll(async () => {
    [caller, agent, supervisor] = await Promise.all([pair(engine, "caller"), pair(engine, "agent"), pair(engine, "supervisor")]);
    caller.far.play(await engine.player("tone_stream://440"));
    agent.far.play(await engine.player("tone_stream://1000"));
    supervisor.far.play(await engine.player("tone_stream://2000"));
    caller.server.play(mixer.join("caller", caller.server.incoming));
    agent.server.play(mixer.join("agent", agent.server.incoming));
    recorder.attach(mixer, "caller");
  });

  afterAll(async () => {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lets the caller and the agent hear each other through the mixer", async () => {
    const [atCaller, atAgent] = await Promise.all([hears(engine, caller.far), hears(engine, agent.far)]);
    expect(atCaller[1000]).toBeGreaterThan(0.9);
    expect(atAgent[440]).toBeGreaterThan(0.9);
    expect(atCaller[440] + atAgent[1000]).toBeLessThan(0.01);
  });

  it("eavesdrop: the supervisor hears both, neither party hears the supervisor", async () => {
    supervisor.server.play(mixer.join("supervisor", supervisor.server.incoming, { kind: "monitor", mode: "eavesdrop", target: "agent" }));
    const [atCaller, atAgent, atSupervisor] = await Promise.all([hears(engine, caller.far), hears(engine, agent.far), hears(engine, supervisor.far)]);
    expect(atSupervisor[440]).toBeGreaterThan(0.3);
    expect(atSupervisor[1000]).toBeGreaterThan(0.3);
    expect(atCaller[2000]).toBeLessThan(0.01);
    expect(atAgent[2000]).toBeLessThan(0.01);
  });

  it("whisper: only the agent hears the supervisor", async () => {
    mixer.setMonitor("supervisor", "whisper");
    const [atCaller, atAgent] = await Promise.all([hears(engine, caller.far), hears(engine, agent.far)]);
    expect(atAgent[2000]).toBeGreaterThan(0.3);
    expect(atAgent[440]).toBeGreaterThan(0.3);
    expect(atCaller[2000]).toBeLessThan(0.01);
  });

  it("barge: both parties hear the supervisor", async () => {
    mixer.setMonitor("supervisor", "barge");
    const [atCaller, atAgent] = await Promise.all([hears(engine, caller.far), hears(engine, agent.far)]);
    expect(atCaller[2000]).toBeGreaterThan(0.3);
    expect(atAgent[2000]).toBeGreaterThan(0.3);
  });

  it("records the caller left and what the caller heard right", async () => {
    const result = await recorder.finish();
    expect(result.durationMs).toBeGreaterThan(2000);
    const bytes = readFileSync(result.path);
    const wav = parseWav(bytes);
    expect(wav).toMatchObject({ channels: 2, sampleRate: 8000, bitsPerSample: 16 });
    expect(wav.dataLength).toBe((result.durationMs / 20) * 640);
    const left: number[] = [];
    const right: number[] = [];
    for (let at = wav.dataOffset + 8000 * 4; at + 4 <= bytes.length; at += 4) {
      left.push(bytes.readInt16LE(at));
      right.push(bytes.readInt16LE(at + 2));
    }
    // The caller's voice is what the left channel holds, frame by frame (a frame late or cut from
    // a backlog on a loaded machine is bench/media.ts's figure, not this test's).
    expect(frameWiseShare(left, 440)).toBeGreaterThan(0.9);
    // A frame of silence in it is one the caller's leg counted as an underrun, never one that went
    // missing unseen.
    expect(heardTone(left, 440).silentFrames).toBeLessThanOrEqual(caller.server.stats().fifo.underruns);
    expect(toneShare(right, 1000)).toBeGreaterThan(0.4);
    expect(toneShare(right, 440)).toBeLessThan(0.01);
  });
});
