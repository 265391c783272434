// How an offered call makes itself noticed: a ring tone played on the chosen output device (Web
// Audio into an <audio> element, whose setSinkId picks the device) and a desktop notification
// (the desktop app's or the tab's, see notify.ts) that brings the console forward.
import { pageNotifier, type ShownNotification } from "../notify.js";
import type { CallAlerts, CallInfo } from "./phone-line.js";

/** North American ring cadence: 2 s of 440 + 480 Hz, 4 s of silence. */
const RING_ON_S = 2;
const RING_PERIOD_S = 6;
/** The auto-answer tone: one short beep, heard just before the call connects. */
const TONE_HZ = 880;
const TONE_S = 0.25;

class Ringer {
  #context: AudioContext | null = null;
  #player: HTMLAudioElement | null = null;
  /** One gain into one stream for the ringer's life: see start(). */
  #output: { gain: GainNode; destination: MediaStreamAudioDestinationNode } | null = null;
  #stopTone: (() => void) | null = null;
  /** Beeps scheduled and not yet over. */
  #beeping = 0;
  #deviceId: string | undefined;

  start(deviceId: string | undefined): void {
    if (this.#stopTone !== null && deviceId === this.#deviceId) return;
    this.stop();
    this.#deviceId = deviceId;
    const context = (this.#context ??= new AudioContext());
    void context.resume().catch(() => undefined);
    // Made once and reused: a stream destination stays alive as long as its running context (a
    // pending activity in Chromium), so one per ring was never freed: after 100 calls the page
    // held 100 of them, with their streams and tracks (bench/console-memory.ts).
    const { gain, destination } = (this.#output ??= this.#makeOutput(context));
    gain.gain.cancelScheduledValues(0);
    gain.gain.value = 0;
    const oscillators = [440, 480].map((frequency) => {
      const oscillator = context.createOscillator();
      oscillator.frequency.value = frequency;
      oscillator.connect(gain);
      oscillator.start();
      return oscillator;
    });
    // The cadence is scheduled ahead on the audio clock: a busy page cannot make it stutter.
    const start = context.currentTime + 0.05;
    for (let cycle = 0; cycle < 100; cycle++) {
      const at = start + cycle * RING_PERIOD_S;
      gain.gain.setValueAtTime(0.15, at);
      gain.gain.setValueAtTime(0, at + RING_ON_S);
    }
    const player = (this.#player ??= new Audio());
    player.srcObject = destination.stream;
    const sink = typeof player.setSinkId === "function" ? player.setSinkId(deviceId ?? "").catch(() => undefined) : Promise.resolve();
    void sink.then(() => player.play().catch(() => undefined));
    this.#stopTone = () => {
      for (const oscillator of oscillators) {
        oscillator.stop();
        oscillator.disconnect();
      }
      gain.gain.cancelScheduledValues(0);
      gain.gain.value = 0;
      player.pause();
      player.srcObject = null;
    };
  }

  #makeOutput(context: AudioContext): { gain: GainNode; destination: MediaStreamAudioDestinationNode } {
    const destination = context.createMediaStreamDestination();
    const gain = context.createGain();
    gain.connect(destination);
    return { gain, destination };
  }

  stop(): void {
    this.#stopTone?.();
    this.#stopTone = null;
    this.#quiet();
  }

  /**
   * A running context renders (silence too) every 10 ms on an audio thread of the page and one of
   * the browser's audio service, and a playing element pulls from it, for as long as the page
   * lives: paused and suspended between rings, they cost nothing. Suspend and resume are queued in
   * order, so a ring right after is heard.
   */
  #quiet(): void {
    if (this.#stopTone !== null || this.#beeping > 0) return;
    if (this.#player !== null) {
      this.#player.pause();
      this.#player.srcObject = null;
    }
    void this.#context?.suspend().catch(() => undefined);
  }

  /** One beep on the device the ringer last used. */
  beep(): void {
    this.stop();
    const context = (this.#context ??= new AudioContext());
    void context.resume().catch(() => undefined);
    const { gain, destination } = (this.#output ??= this.#makeOutput(context));
    const oscillator = context.createOscillator();
    oscillator.frequency.value = TONE_HZ;
    oscillator.connect(gain);
    const start = context.currentTime + 0.02;
    gain.gain.cancelScheduledValues(0);
    gain.gain.setValueAtTime(0.15, start);
    gain.gain.setValueAtTime(0, start + TONE_S);
    oscillator.start(start);
    oscillator.stop(start + TONE_S);
    this.#beeping += 1;
    oscillator.onended = () => {
      oscillator.disconnect();
      this.#beeping -= 1;
      this.#quiet();
    };
    const player = (this.#player ??= new Audio());
    player.srcObject = destination.stream;
    void player.play().catch(() => undefined);
  }
}

/** Asks once for permission to notify, from a user's gesture (sign-in), where the browser asks at all. */
export function askNotificationPermission(): void {
  if (typeof Notification === "undefined" || Notification.permission !== "default") return;
  void Notification.requestPermission().catch(() => undefined);
}

export function pageCallAlerts(): CallAlerts {
  const ringer = new Ringer();
  const notify = pageNotifier();
  const shown = new Map<string, ShownNotification>();
  return {
    ring: (deviceId) => ringer.start(deviceId),
    stopRing: () => ringer.stop(),
    tone: () => ringer.beep(),
    notify(call: CallInfo) {
      if (shown.has(call.id)) return;
      const who = call.remoteName && call.remoteName !== call.remoteUser ? `${call.remoteName} (${call.remoteUser})` : call.remoteUser || "Unknown caller";
      const queue = call.offer.queueName ? ` from the ${call.offer.queueName} queue` : "";
      // Urgent: the desktop app brings a minimised window forward at once; a click brings the tab
      // or the window forward, where Accept has the focus.
      const notification = notify({ title: "Incoming call", body: `${who}${queue}`, tag: call.id, urgent: true });
      if (notification !== null) shown.set(call.id, notification);
    },
    dismiss(callId) {
      shown.get(callId)?.close();
      shown.delete(callId);
    },
  };
}
