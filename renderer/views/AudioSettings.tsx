// Audio settings: the microphone, speaker and ringer the console uses (remembered on this
// computer), a level meter that shows the chosen microphone is heard, and a test tone on the
// speaker or the ringer.
import { useCallback, useEffect, useId, useState } from "react";
import { useShallow } from "zustand/react/shallow";
import type { AudioDeviceOption, AudioRole, ToneTarget } from "../state/audio.js";
import { meterLevel } from "../state/audio.js";
import { useAppStore } from "../state/context.js";
import { ErrorAlert } from "./admin/parts.js";
import "./admin/views.css";

/** Meter updates per second: enough to look live, few enough not to re-render every frame. */
const METER_HZ = 15;

/**
 * The live level (0..1) of a microphone, read through a Web Audio AnalyserNode. Re-opens the
 * device when the choice changes; stops the microphone when the view closes.
 */
function useMicrophoneLevel(deviceId: string, onOpened: () => void): { level: number; error: string | null } {
  const [level, setLevel] = useState(0);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stopped = false;
    let stream: MediaStream | null = null;
    let context: AudioContext | null = null;
    let frame = 0;
    let lastShown = 0;

    (async () => {
      try {
        const audio: MediaTrackConstraints = { echoCancellation: false, autoGainControl: false, noiseSuppression: false };
        if (deviceId !== "") audio.deviceId = { exact: deviceId };
        stream = await navigator.mediaDevices.getUserMedia({ audio, video: false });
        if (stopped) {
          for (const track of stream.getTracks()) track.stop();
          return;
        }
        setError(null);
        onOpened();
        context = new AudioContext();
        const analyser = context.createAnalyser();
        analyser.fftSize = 2048;
        context.createMediaStreamSource(stream).connect(analyser);
        const samples = new Float32Array(analyser.fftSize);
        const read = (at: number) => {
          if (stopped) return;
          if (at - lastShown >= 1000 / METER_HZ) {
            lastShown = at;
            analyser.getFloatTimeDomainData(samples);
            setLevel(meterLevel(samples));
          }
          frame = requestAnimationFrame(read);
        };
        frame = requestAnimationFrame(read);
      } catch (cause) {
        if (stopped) return;
        const name = cause instanceof Error ? cause.name : "";
        setError(
          name === "NotAllowedError"
            ? "The console may not use the microphone. Allow it in the browser's site settings."
            : name === "OverconstrainedError" || name === "NotFoundError"
              ? "The chosen microphone is not connected. Choose another."
              : "The microphone could not be opened.",
        );
        setLevel(0);
      }
    })();

    return () => {
      stopped = true;
      cancelAnimationFrame(frame);
      for (const track of stream?.getTracks() ?? []) track.stop();
      void context?.close();
    };
  }, [deviceId, onOpened]);

  return { level, error };
}

export function AudioSettings() {
  const s = useAppStore(
    useShallow((state) => ({
      audio: state.audio,
      refreshAudioDevices: state.refreshAudioDevices,
      chooseAudioDevice: state.chooseAudioDevice,
      playTestTone: state.playTestTone,
      stopTestTone: state.stopTestTone,
    })),
  );
  const { audio, refreshAudioDevices, stopTestTone } = s;
  // Once the microphone is open the device labels are readable: list them then.
  const listDevices = useCallback(() => void refreshAudioDevices(), [refreshAudioDevices]);
  const meter = useMicrophoneLevel(audio.microphoneId, listDevices);

  useEffect(() => stopTestTone, [stopTestTone]);

  const percent = Math.round(meter.level * 100);

  return (
    <section aria-labelledby="audio-heading">
      <h1 id="audio-heading">Audio settings</h1>
      <p className="view-intro">Remembered on this computer. Calls use the microphone and speaker; incoming calls ring on the ringer.</p>

      <div className="toolbar">
        <button type="button" className="button" onClick={() => void refreshAudioDevices()}>
          Refresh devices
        </button>
        <p className="status-text" role="status" aria-live="polite">
          {audio.listing ? "Looking for audio devices…" : ""}
        </p>
      </div>
      <ErrorAlert message={audio.listError} />

      <div className="panel">
        <DeviceChoice role="microphone" label="Microphone" options={audio.inputs} value={audio.microphoneId} onChoose={s.chooseAudioDevice} />
        <div className="field">
          <label htmlFor="microphone-level">Microphone level</label>
          <meter
            id="microphone-level"
            className="level-meter"
            min={0}
            max={1}
            low={0.2}
            high={0.9}
            optimum={0.5}
            value={meter.level}
            data-level={meter.level.toFixed(3)}
            aria-valuetext={`${percent} percent`}
          />
          <p className="field-hint">Speak: the bar should move. If it stays empty, choose another microphone.</p>
        </div>
        <ErrorAlert message={meter.error} />
      </div>

      <div className="panel">
        {!audio.outputsChoosable ? (
          <p className="muted">This browser plays everything on the system's default output; the choices below are kept for the desktop app.</p>
        ) : null}
        <OutputChoice
          role="speaker"
          label="Speaker"
          options={audio.outputs}
          value={audio.speakerId}
          playing={audio.tone === "speaker"}
          onChoose={s.chooseAudioDevice}
          onTest={s.playTestTone}
          onStop={stopTestTone}
        />
        <OutputChoice
          role="ringer"
          label="Ringer"
          options={audio.outputs}
          value={audio.ringerId}
          playing={audio.tone === "ringer"}
          onChoose={s.chooseAudioDevice}
          onTest={s.playTestTone}
          onStop={stopTestTone}
        />
        <p className="status-text" role="status" aria-live="polite">
          {audio.tone !== null ? `Playing a test tone on the ${audio.tone}…` : ""}
        </p>
        <ErrorAlert message={audio.toneError} />
      </div>
    </section>
  );
}

interface DeviceChoiceProps {
  role: AudioRole;
  label: string;
  options: AudioDeviceOption[];
  value: string;
  onChoose(role: AudioRole, deviceId: string): void;
}

function DeviceChoice({ role, label, options, value, onChoose }: DeviceChoiceProps) {
  const id = useId();
  // A remembered device that is not plugged in now stays chosen, and says so.
  const missing = value !== "" && !options.some((o) => o.deviceId === value);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} name={role} value={value} onChange={(e) => onChoose(role, e.target.value)}>
        {options.map((option) => (
          <option key={option.deviceId} value={option.deviceId}>
            {option.label}
          </option>
        ))}
        {missing ? <option value={value}>Chosen device (not connected now)</option> : null}
      </select>
    </div>
  );
}

interface OutputChoiceProps extends DeviceChoiceProps {
  role: ToneTarget;
  playing: boolean;
  onTest(target: ToneTarget): Promise<boolean>;
  onStop(): void;
}

function OutputChoice({ playing, onTest, onStop, ...choice }: OutputChoiceProps) {
  return (
    <div className="audio-role">
      <DeviceChoice {...choice} />
      <div className="field">
        <button
          type="button"
          className="button"
          aria-label={`${playing ? "Stop tone" : "Play test tone"} on the ${choice.label.toLowerCase()}`}
          onClick={() => (playing ? onStop() : void onTest(choice.role))}
        >
          {playing ? "Stop tone" : "Play test tone"}
        </button>
      </div>
    </div>
  );
}
