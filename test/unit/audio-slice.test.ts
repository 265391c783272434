// The audio slice through the whole store, with fake audio hardware and a manual clock: device
// lists as the agent sees them, choices remembered across stores on the same storage, the test
// tone stopping on the clock, replacing and failing; and the level meter's scale.
import { describe, expect, it } from "vitest";
import { deviceOptions, meterLevel, TEST_TONE_MS, type AudioHardware, type MediaDeviceLike, type ToneTarget } from "../../renderer/state/audio.js";
import { memoryStorage } from "../../renderer/state/storage.js";
import { consoleStore, deferred } from "../helpers/console-store.js";

const DEVICES: MediaDeviceLike[] = [
  { deviceId: "default", kind: "audioinput", label: "Default - Headset" },
  { deviceId: "communications", kind: "audioinput", label: "Communications - Headset" },
  { deviceId: "mic-1", kind: "audioinput", label: "Headset" },
  { deviceId: "mic-2", kind: "audioinput", label: "" },
  { deviceId: "mic-2", kind: "audioinput", label: "" },
  { deviceId: "out-1", kind: "audiooutput", label: "Speakers" },
  { deviceId: "out-2", kind: "audiooutput", label: "Headset" },
  { deviceId: "cam", kind: "videoinput", label: "Camera" },
];

/** Hardware whose tones the test can see start and stop. */
function fakeHardware(options: { listError?: Error } = {}) {
  const tones: { sinkId: string; kind: ToneTarget; stopped: boolean }[] = [];
  let playError: Error | null = null;
  let held: ReturnType<typeof deferred<void>> | null = null;
  const hardware: AudioHardware = {
    listDevices: async () => {
      if (options.listError) throw options.listError;
      return DEVICES;
    },
    canChooseOutput: () => true,
    async playTone(sinkId, kind) {
      if (held !== null) await held.promise;
      if (playError !== null) throw playError;
      const tone = { sinkId, kind, stopped: false };
      tones.push(tone);
      return { stop: () => void (tone.stopped = true) };
    },
  };
  return {
    hardware,
    tones,
    failPlay: (error: Error | null) => (playError = error),
    hold: () => (held = deferred<void>()),
    release: () => held?.resolve(),
  };
}

describe("audio device lists", () => {
  it("puts the system default first, once, and names unnamed devices", () => {
    expect(deviceOptions(DEVICES, "audioinput")).toEqual([
      { deviceId: "", label: "System default" },
      { deviceId: "mic-1", label: "Headset" },
      { deviceId: "mic-2", label: "Microphone 1" },
    ]);
    expect(deviceOptions(DEVICES, "audiooutput").map((o) => o.deviceId)).toEqual(["", "out-1", "out-2"]);
  });
});

describe("microphone level", () => {
  it("maps the RMS level from -60 dBFS (empty) to 0 dBFS (full)", () => {
    expect(meterLevel(new Float32Array(128))).toBe(0);
    expect(meterLevel([])).toBe(0);
    const square = (amplitude: number) => Array.from({ length: 256 }, (_, i) => (i % 2 === 0 ? amplitude : -amplitude));
    expect(meterLevel(square(1))).toBeCloseTo(1, 5);
    expect(meterLevel(square(0.01))).toBeCloseTo(1 / 3, 5);
    expect(meterLevel(square(0.0001))).toBe(0);
  });
});

describe("audio slice", () => {
  it("lists the devices, and remembers each choice for the next visit", async () => {
    const storage = memoryStorage();
    const fake = fakeHardware();
    const first = consoleStore({ storage, audioHardware: fake.hardware }).store;
    expect(first.getState().audio).toMatchObject({ microphoneId: "", speakerId: "", ringerId: "", outputsChoosable: true });
    await first.getState().refreshAudioDevices();
    expect(first.getState().audio.inputs).toHaveLength(3);
    expect(first.getState().audio.outputs).toHaveLength(3);

    first.getState().chooseAudioDevice("microphone", "mic-2");
    first.getState().chooseAudioDevice("speaker", "out-2");
    first.getState().chooseAudioDevice("ringer", "out-1");
    expect(first.getState().audio).toMatchObject({ microphoneId: "mic-2", speakerId: "out-2", ringerId: "out-1" });

    const again = consoleStore({ storage, audioHardware: fake.hardware }).store;
    expect(again.getState().audio).toMatchObject({ microphoneId: "mic-2", speakerId: "out-2", ringerId: "out-1" });
  });

  it("ignores a corrupt remembered value", () => {
    const storage = memoryStorage();
    storage.setItem("switchboard.audio", '{"microphoneId": 7, "speakerId": "out-1"');
    const { store } = consoleStore({ storage, audioHardware: fakeHardware().hardware });
    expect(store.getState().audio).toMatchObject({ microphoneId: "", speakerId: "", ringerId: "" });
  });

  it("says how to allow the microphone when the browser refuses it", async () => {
    const denied = Object.assign(new Error("Permission denied"), { name: "NotAllowedError" });
    const { store } = consoleStore({ audioHardware: fakeHardware({ listError: denied }).hardware });
    await store.getState().refreshAudioDevices();
    expect(store.getState().audio.listError).toMatch(/Allow it in the browser's site settings/);
    expect(store.getState().audio.listing).toBe(false);
  });

  it("plays the test tone on the chosen output and stops it when its time is up on the clock", async () => {
    const fake = fakeHardware();
    const { store, clock } = consoleStore({ audioHardware: fake.hardware });
    store.getState().chooseAudioDevice("ringer", "out-1");
    expect(await store.getState().playTestTone("ringer")).toBe(true);
    expect(fake.tones).toEqual([{ sinkId: "out-1", kind: "ringer", stopped: false }]);
    expect(store.getState().audio.tone).toBe("ringer");
    await clock.advance(TEST_TONE_MS - 1);
    expect(fake.tones[0]?.stopped).toBe(false);
    await clock.advance(1);
    expect(fake.tones[0]?.stopped).toBe(true);
    expect(store.getState().audio.tone).toBeNull();
  });

  it("replaces a playing tone with a new one, and Stop ends it at once", async () => {
    const fake = fakeHardware();
    const { store, clock } = consoleStore({ audioHardware: fake.hardware });
    await store.getState().playTestTone("speaker");
    await store.getState().playTestTone("ringer");
    expect(fake.tones.map((t) => [t.kind, t.stopped])).toEqual([
      ["speaker", true],
      ["ringer", false],
    ]);
    store.getState().stopTestTone();
    expect(fake.tones[1]?.stopped).toBe(true);
    expect(store.getState().audio.tone).toBeNull();
    expect(clock.pending()).toBe(0);
  });

  it("stops a tone that was still starting when Stop was pressed", async () => {
    const fake = fakeHardware();
    const { store } = consoleStore({ audioHardware: fake.hardware });
    fake.hold();
    const starting = store.getState().playTestTone("speaker");
    store.getState().stopTestTone();
    fake.release();
    expect(await starting).toBe(false);
    expect(fake.tones).toEqual([{ sinkId: "", kind: "speaker", stopped: true }]);
    expect(store.getState().audio.tone).toBeNull();
  });

  it("says the output could not play, and is not left playing", async () => {
    const fake = fakeHardware();
    const { store } = consoleStore({ audioHardware: fake.hardware });
    fake.failPlay(Object.assign(new Error("Requested device not found"), { name: "NotFoundError" }));
    expect(await store.getState().playTestTone("speaker")).toBe(false);
    expect(store.getState().audio).toMatchObject({ tone: null, toneError: "The speaker could not play the test tone. Choose another output." });
  });
});
