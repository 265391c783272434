// The browser's side of the audio settings: listing media devices (after asking for the
// microphone once, so their labels are readable) and a test tone on a chosen output (setSinkId).
import type { AudioHardware } from "../state/audio.js";

/** The browser's media devices and Web Audio. */
export function browserAudioHardware(): AudioHardware {
  let granted = false;
  return {
    async listDevices() {
      const media = navigator.mediaDevices;
      if (media === undefined) throw new Error("no media devices");
      if (!granted) {
        // Labels stay empty until the page may use the microphone; the stream is only that proof.
        const stream = await media.getUserMedia({ audio: true, video: false });
        for (const track of stream.getTracks()) track.stop();
        granted = true;
      }
      return media.enumerateDevices();
    },

    canChooseOutput: () => "setSinkId" in HTMLMediaElement.prototype,

    async playTone(sinkId, kind) {
      const context = new AudioContext();
      const destination = context.createMediaStreamDestination();
      const gain = context.createGain();
      gain.gain.value = 0.2;
      gain.connect(destination);
      // The speaker gets a plain 440 Hz tone; the ringer a ring-back-like 440+480 Hz pair that
      // pulses, so the two are told apart by ear.
      const frequencies = kind === "speaker" ? [440] : [440, 480];
      const oscillators = frequencies.map((frequency) => {
        const oscillator = context.createOscillator();
        oscillator.frequency.value = frequency;
        oscillator.connect(gain);
        oscillator.start();
        return oscillator;
      });
      if (kind === "ringer") {
        for (let at = 0; at < 4; at += 1) {
          gain.gain.setValueAtTime(0.2, context.currentTime + at);
          gain.gain.setValueAtTime(0, context.currentTime + at + 0.6);
        }
      }
      const element = new Audio();
      element.dataset.testTone = kind;
      element.srcObject = destination.stream;
      const stop = () => {
        for (const oscillator of oscillators) oscillator.stop();
        element.pause();
        element.srcObject = null;
        element.remove();
        void context.close();
      };
      try {
        if (sinkId !== "" && typeof element.setSinkId === "function") await element.setSinkId(sinkId);
        // In the document (hidden) so what plays where can be inspected.
        element.hidden = true;
        document.body.append(element);
        await element.play();
      } catch (error) {
        stop();
        throw error;
      }
      return { stop };
    },
  };
}
