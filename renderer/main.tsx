// The renderer's entry: builds the store from the page's real surroundings (localStorage, origin,
// the HTTP APIs, sip.js, Web Audio, notifications) and mounts the app. Nothing below this file
// touches those globals directly.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { httpAuthApi, onUnauthorized } from "./api/client.js";
import { App } from "./App.js";
import { pageCallAlerts } from "./phone/alerts.js";
import type { PhoneFactory } from "./phone/phone-line.js";
import { systemClock } from "./clock.js";
import { StoreProvider } from "./state/context.js";
import { memoryStorage, type KeyValueStorage } from "./state/storage.js";
import { createAppStore } from "./state/store.js";
import { browserAudioHardware } from "./views/AudioSettingsHardware.js";
import "./styles.css";

function pageStorage(): KeyValueStorage {
  try {
    // Reading window.localStorage throws where storage is disabled; the console still works then.
    return window.localStorage;
  } catch {
    return memoryStorage();
  }
}

// sip.js loads with the first line, not with the sign-in screen.
const softphone: PhoneFactory = async (options) => {
  const { Softphone } = await import("./phone/softphone.js");
  return new Softphone({
    server: options.server,
    username: options.username,
    password: options.password,
    realm: options.realm,
    displayName: options.displayName,
    speakerId: options.speakerId,
    audio: options.microphoneId ? { deviceId: options.microphoneId } : true,
    reconnect: { clock: systemClock },
  });
};

const store = createAppStore({
  storage: pageStorage(),
  pageOrigin: window.location.origin,
  auth: httpAuthApi,
  audioHardware: browserAudioHardware(),
  clock: systemClock,
  phone: softphone,
  alerts: pageCallAlerts(),
});
// Any request refused for its token, whichever view made it, ends the session (keeping the view).
onUnauthorized(() => store.getState().expireSession());

const root = document.getElementById("root");
if (root === null) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <StoreProvider store={store}>
      <App />
    </StoreProvider>
  </StrictMode>,
);
