// The audio slice: which microphone, speaker and ringer the console uses (remembered on this
// computer), the devices there are to choose from, and a test tone on the speaker or the ringer.
// The browser's media devices come in as `AudioHardware` (views/AudioSettingsHardware.ts), so
// tests can fake them and this file needs no DOM.
import type { StateCreator } from "zustand/vanilla";
import type { Clock } from "../clock.js";
import type { AppState } from "./store.js";
import { readStored, writeStored, type KeyValueStorage } from "./storage.js";

/** One device as enumerateDevices tells it. "" is the system default. */
export interface AudioDeviceOption {
  deviceId: string;
  label: string;
}

/** The parts of MediaDeviceInfo the slice reads. */
export interface MediaDeviceLike {
  deviceId: string;
  kind: string;
  label: string;
}

export type AudioRole = "microphone" | "speaker" | "ringer";
export type ToneTarget = "speaker" | "ringer";

export interface PlayingTone {
  stop(): void;
}

export interface AudioHardware {
  /** enumerateDevices, after asking for the microphone once so the labels are filled in. */
  listDevices(): Promise<MediaDeviceLike[]>;
  /** Starts a tone on the output `sinkId` ("" the default); rejects when that output cannot be used. */
  playTone(sinkId: string, kind: ToneTarget): Promise<PlayingTone>;
  /** Whether outputs can be chosen at all (setSinkId); Firefox and older browsers cannot. */
  canChooseOutput(): boolean;
}

export interface AudioChoices {
  microphoneId: string;
  speakerId: string;
  ringerId: string;
}

export interface AudioSettingsState extends AudioChoices {
  inputs: AudioDeviceOption[];
  outputs: AudioDeviceOption[];
  listing: boolean;
  listError: string | null;
  outputsChoosable: boolean;
  tone: ToneTarget | null;
  toneError: string | null;
}

export interface AudioSlice {
  audio: AudioSettingsState;
  refreshAudioDevices(): Promise<void>;
  chooseAudioDevice(role: AudioRole, deviceId: string): void;
  /** Plays a test tone on the speaker or the ringer for `TEST_TONE_MS`, or until stopped. */
  playTestTone(target: ToneTarget): Promise<boolean>;
  stopTestTone(): void;
}

export interface AudioDeps {
  storage: KeyValueStorage;
  clock: Clock;
  audioHardware?: AudioHardware;
}

export const TEST_TONE_MS = 3000;

/** Where no hardware was given (the page passes the browser's, views/AudioSettingsHardware.ts). */
const NO_AUDIO_HARDWARE: AudioHardware = {
  listDevices: () => Promise.reject(new Error("no audio hardware")),
  playTone: () => Promise.reject(new Error("no audio hardware")),
  canChooseOutput: () => false,
};
const AUDIO_KEY = "switchboard.audio";
const DEFAULT_CHOICES: AudioChoices = { microphoneId: "", speakerId: "", ringerId: "" };

const ROLE_KEY: Record<AudioRole, keyof AudioChoices> = { microphone: "microphoneId", speaker: "speakerId", ringer: "ringerId" };

function parseChoices(value: unknown): AudioChoices {
  if (typeof value !== "object" || value === null) return DEFAULT_CHOICES;
  const pick = (key: keyof AudioChoices): string => {
    const v: unknown = Reflect.get(value, key);
    return typeof v === "string" ? v : "";
  };
  return { microphoneId: pick("microphoneId"), speakerId: pick("speakerId"), ringerId: pick("ringerId") };
}

/**
 * The options of one kind: the system default first (Chromium also lists it as "default" and
 * "communications", which would duplicate it), then each device once with a readable label.
 */
export function deviceOptions(devices: MediaDeviceLike[], kind: "audioinput" | "audiooutput"): AudioDeviceOption[] {
  const noun = kind === "audioinput" ? "Microphone" : "Speaker";
  const options: AudioDeviceOption[] = [{ deviceId: "", label: "System default" }];
  const seen = new Set<string>();
  let unnamed = 0;
  for (const device of devices) {
    if (device.kind !== kind || device.deviceId === "" || device.deviceId === "default" || device.deviceId === "communications") continue;
    if (seen.has(device.deviceId)) continue;
    seen.add(device.deviceId);
    options.push({ deviceId: device.deviceId, label: device.label !== "" ? device.label : `${noun} ${++unnamed}` });
  }
  return options;
}

/**
 * A microphone level for a meter, 0..1, from time-domain samples in -1..1: the RMS in dBFS
 * mapped linearly from -60 dB (0) to 0 dB (1), so speech sits mid-scale rather than at the floor.
 */
export function meterLevel(samples: ArrayLike<number>): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i] ?? 0;
    sum += s * s;
  }
  const rms = Math.sqrt(sum / samples.length);
  if (rms <= 0) return 0;
  const db = 20 * Math.log10(rms);
  return Math.min(1, Math.max(0, (db + 60) / 60));
}

export function createAudioSlice(deps: AudioDeps): StateCreator<AppState, [], [], AudioSlice> {
  const hardware = deps.audioHardware ?? NO_AUDIO_HARDWARE;
  const stored = parseChoices(readStored(deps.storage, AUDIO_KEY));
  let playing: { tone: PlayingTone; cancelTimer: () => void } | null = null;
  // A tone asked for while an earlier one was still starting replaces it.
  let toneRequest = 0;

  return (set, get) => {
    const patch = (changes: Partial<AudioSettingsState>) => set((s) => ({ audio: { ...s.audio, ...changes } }));

    const stopPlaying = () => {
      playing?.cancelTimer();
      playing?.tone.stop();
      playing = null;
    };

    return {
      audio: {
        ...stored,
        inputs: [{ deviceId: "", label: "System default" }],
        outputs: [{ deviceId: "", label: "System default" }],
        listing: false,
        listError: null,
        outputsChoosable: hardware.canChooseOutput(),
        tone: null,
        toneError: null,
      },

      async refreshAudioDevices() {
        patch({ listing: true, listError: null });
        try {
          const devices = await hardware.listDevices();
          patch({ inputs: deviceOptions(devices, "audioinput"), outputs: deviceOptions(devices, "audiooutput"), listing: false });
        } catch (error) {
          const denied = error instanceof Error && (error.name === "NotAllowedError" || error.name === "SecurityError");
          patch({
            listing: false,
            listError: denied
              ? "The console may not use the microphone. Allow it in the browser's site settings, then try again."
              : "The audio devices could not be listed.",
          });
        }
      },

      chooseAudioDevice(role, deviceId) {
        const choices: AudioChoices = { ...pickChoices(get().audio), [ROLE_KEY[role]]: deviceId };
        writeStored(deps.storage, AUDIO_KEY, choices);
        patch(choices);
      },

      async playTestTone(target) {
        const mine = ++toneRequest;
        stopPlaying();
        const sinkId = target === "speaker" ? get().audio.speakerId : get().audio.ringerId;
        patch({ tone: target, toneError: null });
        try {
          const tone = await hardware.playTone(sinkId, target);
          if (mine !== toneRequest) {
            tone.stop();
            return false;
          }
          const cancelTimer = deps.clock.after(TEST_TONE_MS, () => {
            if (mine !== toneRequest) return;
            stopPlaying();
            patch({ tone: null });
          });
          playing = { tone, cancelTimer };
          return true;
        } catch {
          if (mine === toneRequest) patch({ tone: null, toneError: `The ${target} could not play the test tone. Choose another output.` });
          return false;
        }
      },

      stopTestTone() {
        toneRequest++;
        stopPlaying();
        patch({ tone: null });
      },
    };
  };
}

function pickChoices(state: AudioChoices): AudioChoices {
  return { microphoneId: state.microphoneId, speakerId: state.speakerId, ringerId: state.ringerId };
}
