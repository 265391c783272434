// Legs whose peer connections run in media worker threads: real workers, real werift legs over
// UDP on 127.0.0.1 against legs in this thread. Audio both ways on every leg (losses under load: bench/media.ts),
// legs spread over the workers, errors and state mirrored, cleanup, and a worker that dies (killed,
// or an exception inside it) ending its legs cleanly while the engine carries on.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MediaEngine, RemoteLeg, SdpError, type WebRtcLeg } from "../../server/media/index.js";
import { heardTone, measureUntilHeard } from "../helpers/tone-windows.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** A far-end leg in this thread calls a leg of `server`; resolves once both are connected. */
async function call(server: MediaEngine, far: MediaEngine, tones: [number, number]): Promise<{ leg: WebRtcLeg; phone: WebRtcLeg }> {
  const leg = server.createLeg();
  const phone = far.createLeg();
  leg.play(await server.player(`tone_stream://${tones[0]}`));
  phone.play(await far.player(`tone_stream://${tones[1]}`));
  await phone.acceptAnswer(await leg.acceptOffer(await phone.createOffer()));
  await until(() => leg.state === "connected" && phone.state === "connected", "the legs to connect");
  return { leg, phone };
}

/** What `leg` receives over `ms`, read on `engine`'s clock as a bridge would. */
async function listen(engine: MediaEngine, leg: WebRtcLeg, ms: number): Promise<number[]> {
  const samples: number[] = [];
  const stop = engine.clock.subscribe((tick) => samples.push(...leg.incoming.read(tick)));
  await sleep(ms);
  stop();
  return samples;
}

/** What a window in which a clock skipped ticks is short of (measured again, not a failure by itself). */
const SKIPPED = "the clocks skipped";

const threadOf = (leg: WebRtcLeg) => (leg instanceof RemoteLeg ? leg.threadId : undefined);

describe("legs in media worker threads", () => {
  const failures: string[] = [];
  // Its clock is in this thread with the phones and stalls with them, as in the other media tests:
  // frames owed after a stall are sent, not skipped as stale (see maxSendLatenessMs).
  const server = new MediaEngine({ workers: 2, maxSendLatenessMs: Infinity, onWorkerFailure: (reason) => failures.push(reason) });
  // The phones stand in for browsers: in this thread, sending every frame whatever the lateness.
  const far = new MediaEngine({ maxSendLatenessMs: Infinity });
  const calls: { leg: WebRtcLeg; phone: WebRtcLeg }[] = [];

  beforeAll(async () => {
    for (let i = 0; i < 10; i++) calls.push(await call(server, far, [440, 1000]));
  });

  afterAll(async () => {
    await Promise.all([server.close(), far.close()]);
  });

  it("spreads legs over the workers, each new one on the least loaded", async () => {
    expect(server.workers).toHaveLength(2);
    const perThread = new Map<number | undefined, number>();
    for (const { leg } of calls) perThread.set(threadOf(leg), (perThread.get(threadOf(leg)) ?? 0) + 1);
    expect([...perThread.values()]).toEqual([5, 5]);
    expect(perThread.has(undefined)).toBe(false);
    const stats = await server.workerStats();
    expect(stats.map((s) => s.legs)).toEqual([5, 5]);
  });

  // Frames lost or dropped under load are a figure of the machine as much as of this code: bench/media.ts
  // measures them (10, 50, 100 calls, with workers); here the audio must flow both ways, right.
  it("carries audio both ways on every leg (10 calls, 3 s)", async () => {
    const snapshot = () => calls.map(({ leg, phone }) => [leg.stats(), phone.stats()] as const);
    // Media flowing on every leg before the window, not a pause that assumes it.
    await until(() => snapshot().every(([leg, phone]) => leg.packetsReceived > 0 && phone.packetsReceived > 0), "audio on every leg");
    const before = snapshot();
    const skipped = () => server.clock.stats().skipped + far.clock.stats().skipped;
    let skippedBefore = skipped();
    let first: [number[], number[]] | undefined = await Promise.all([listen(server, calls[0].leg, 3000), listen(far, calls[9].phone, 3000)]);
    const after = snapshot();
    for (const [i, pair] of after.entries()) {
      for (const side of [0, 1] as const) {
        expect(pair[side].packetsReceived - (before[i]?.[side].packetsReceived ?? 0), `call ${i}, ${side === 0 ? "server" : "phone"} leg receives`).toBeGreaterThan(0);
        expect(pair[side].packetsSent - (before[i]?.[side].packetsSent ?? 0), `call ${i}, ${side === 0 ? "server" : "phone"} leg sends`).toBeGreaterThan(0);
      }
    }
    // The tones over the window's last second, in the frames played: a frame of silence where a
    // receive buffer ran dry (the first late packet as it finds its depth, or the catch-up after a
    // stall of this thread, where both ends' clocks run) is counted, not taken as a phase jump that
    // would cost a 440 Hz share a third of its value (test/helpers/tone-windows.ts). A lost frame
    // still costs the share. Heard again (up to two more windows) when one fell short: a starved
    // thread skews one second of audio, not the next.
    // A window in which either clock skipped ticks (this thread starved over 200 ms: frames never
    // played, counted as lost by the legs, bench/media.ts's figure) is short too: measured again,
    // within the same windows.
    const { heard, short } = await measureUntilHeard(
      async () => {
        const [atServer, atPhone] = first ?? (await Promise.all([listen(server, calls[0].leg, 1500), listen(far, calls[9].phone, 1500)]));
        first = undefined;
        const skippedNow = skipped() - skippedBefore;
        skippedBefore += skippedNow;
        return { server: heardTone(atServer.slice(-8000), 1000), phone: heardTone(atPhone.slice(-8000), 440), skipped: skippedNow };
      },
      ({ server: s, phone: p, skipped: k }) => [
        ...(k === 0 ? [] : [`${SKIPPED}: ${k} ticks`]),
        ...(s.share > 0.9 && s.silentFrames <= 5 ? [] : [`the server leg hears its phone: ${JSON.stringify(s)}`]),
        ...(p.share > 0.9 && p.silentFrames <= 5 ? [] : [`the phone hears the server leg: ${JSON.stringify(p)}`]),
      ],
    );
    // A window the clocks skipped in is measured again, but the last one counts by its tones.
    expect(short.filter((line) => !line.startsWith(SKIPPED))).toEqual([]);
    expect(heard.server.share, "the server leg hears its phone").toBeGreaterThan(0.9);
    expect(heard.phone.share, "the phone hears the server leg").toBeGreaterThan(0.9);
  });

  it("mirrors the worker's codec and direction, and relays DTMF both ways", async () => {
    const { leg, phone } = calls[0];
    expect([leg.codec, leg.direction]).toEqual(["PCMU", "sendrecv"]);
    await phone.acceptAnswer(await leg.acceptOffer(await phone.hold()));
    expect(leg.direction).toBe("recvonly");
    await phone.acceptAnswer(await leg.acceptOffer(await phone.unhold()));
    expect(leg.direction).toBe("sendrecv");
    const atLeg: string[] = [];
    const atPhone: string[] = [];
    leg.on("dtmf", (d) => atLeg.push(d.digit));
    phone.on("dtmf", (d) => atPhone.push(d.digit));
    await Promise.all([phone.sendDtmf("42#"), leg.sendDtmf("7*")]);
    await until(() => atLeg.length >= 3 && atPhone.length >= 2, "the digits");
    expect(atLeg.join("")).toBe("42#");
    expect(atPhone.join("")).toBe("7*");
    expect(leg.stats().dtmfPacketsSent).toBeGreaterThan(0);
  });

  it("refuses an offer without G.711 with an SdpError and leaves the leg new", async () => {
    const leg = server.createLeg();
    const phone = far.createLeg();
    const opusOnly = (await phone.createOffer())
      .replace(/^(m=audio \d+ \S+) 0 8 101/m, "$1 111")
      .replace(/^a=rtpmap:(0|8|101) .*\r?\n/gm, "");
    await expect(leg.acceptOffer(opusOnly)).rejects.toBeInstanceOf(SdpError);
    expect(leg.state).toBe("new");
    await expect(leg.acceptAnswer("v=0")).rejects.toThrow(/before createOffer/);
    await Promise.all([leg.close(), phone.close()]);
    await expect(leg.createOffer()).rejects.toThrow(/closed/);
  });

  it("closing a leg releases it in its worker and reports closed once", async () => {
    const { leg, phone } = await call(server, far, [440, 1000]);
    const states: string[] = [];
    leg.on("state", (change) => states.push(`${change.to}:${change.reason ?? ""}`));
    const legsBefore = (await server.workerStats()).reduce((n, s) => n + s.legs, 0);
    await Promise.all([leg.close("done"), leg.close("again")]);
    expect(states).toEqual(["closed:done"]);
    expect(leg.closeReason).toBe("done");
    expect((await server.workerStats()).reduce((n, s) => n + s.legs, 0)).toBe(legsBefore - 1);
    // The phone sees its far end go (DTLS close) or times out; either way it is released here.
    await phone.close();
  });

  it("a worker killed under live calls ends its legs cleanly; the others and new calls carry on", async () => {
    const victim = server.workers[0];
    const doomed = calls.filter(({ leg }) => threadOf(leg) === victim.threadId);
    const spared = calls.filter(({ leg }) => threadOf(leg) !== victim.threadId);
    const reasons: string[] = [];
    for (const { leg } of doomed) leg.on("state", (change) => reasons.push(change.reason ?? ""));
    await victim.terminate();
    await until(() => doomed.every(({ leg }) => leg.state === "closed"), "the dead worker's legs to close");
    expect(reasons).toHaveLength(doomed.length);
    expect(reasons.every((r) => /media worker/.test(r))).toBe(true);
    expect(failures.some((f) => f.includes(String(victim.threadId)))).toBe(true);
    await expect(doomed[0].leg.sendDtmf("1")).rejects.toThrow(/closed/);
    // The other worker's calls still talk.
    expect(spared.every(({ leg }) => leg.state === "connected")).toBe(true);
    const spareHeard = await measureUntilHeard(
      async () => heardTone((await listen(far, spared[0].phone, 500)).slice(-1920), 440),
      (h) => (h.share > 0.9 && h.silentFrames <= 2 ? [] : [JSON.stringify(h)]),
    );
    expect(spareHeard.short, "a spared call's phone hears its server leg").toEqual([]);
    // A new call gets a fresh worker in the dead one's place.
    const fresh = await call(server, far, [440, 1000]);
    expect(server.workers).toHaveLength(2);
    const freshHeard = await measureUntilHeard(
      async () => heardTone((await listen(far, fresh.phone, 600)).slice(-1920), 440),
      (h) => (h.share > 0.9 && h.silentFrames <= 2 ? [] : [JSON.stringify(h)]),
    );
    expect(freshHeard.short, "the new call's phone hears its server leg").toEqual([]);
    calls.push(fresh);
    for (const { phone } of doomed) await phone.close();
  });

  it("an exception inside a worker ends that worker's legs the same way", async () => {
    const worker = server.workers.find((w) => w.legCount > 0);
    if (!worker) throw new Error("no worker with legs");
    const mine = calls.filter(({ leg }) => leg.state === "connected" && threadOf(leg) === worker.threadId);
    expect(mine.length).toBeGreaterThan(0);
    // A leg whose shared memory is the wrong size: the worker throws while setting it up.
    const failed = new Promise<string>((resolve) =>
      worker.create("broken", { remoteState: () => undefined, remoteDtmf: () => undefined, workerFailed: resolve }, new SharedArrayBuffer(8), {
        seed: new Uint8Array(6),
      }),
    );
    expect(await failed).toMatch(/media worker failed: leg memory must be/);
    await until(() => mine.every(({ leg }) => leg.state === "closed"), "its legs to close");
    expect(mine.every(({ leg }) => /media worker/.test(leg.closeReason ?? ""))).toBe(true);
  });

  it("closing the engine stops every worker", async () => {
    await server.close();
    expect(server.workers).toEqual([]);
    expect([...server.legs]).toEqual([]);
  });
});
