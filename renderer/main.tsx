// The renderer's entry: builds the store from the page's real surroundings (localStorage, origin,
// the HTTP auth API) and mounts the app. Nothing below this file touches those globals directly.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { httpAuthApi } from "./api/client.js";
import { App } from "./App.js";
import { StoreProvider } from "./state/context.js";
import { memoryStorage, type KeyValueStorage } from "./state/storage.js";
import { createAppStore } from "./state/store.js";
import "./styles.css";

function pageStorage(): KeyValueStorage {
  try {
    // Reading window.localStorage throws where storage is disabled; the console still works then.
    return window.localStorage;
  } catch {
    return memoryStorage();
  }
}

const store = createAppStore({ storage: pageStorage(), pageOrigin: window.location.origin, auth: httpAuthApi });

const root = document.getElementById("root");
if (root === null) throw new Error("index.html has no #root element");

createRoot(root).render(
  <StrictMode>
    <StoreProvider store={store}>
      <App />
    </StoreProvider>
  </StrictMode>,
);
