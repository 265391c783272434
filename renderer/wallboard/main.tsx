// The wallboard page's entry (wallboard.html): none of the console's code, only the board, read
// with the key the URL's fragment carries.
import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { systemClock } from "../clock.js";
import { boardAddress, startBoardFeed, type FeedState } from "./board-feed.js";
import { Wallboard } from "./Wallboard.js";
import "./wallboard.css";

/** How often the board is read: often enough for a wall, light on the server. */
const READ_EVERY_MS = 2000;

const root = document.getElementById("root");
if (root === null) throw new Error("wallboard.html has no #root element");

const address = boardAddress(window.location.hash);
const subscribe = (onState: (state: FeedState) => void) =>
  address === null
    ? (onState({ kind: "refused", reason: "This address names no wallboard: open the link an admin or supervisor made for it." }), () => undefined)
    : startBoardFeed({ address, baseUrl: window.location.origin, clock: systemClock, everyMs: READ_EVERY_MS, onState });

createRoot(root).render(
  <StrictMode>
    <Wallboard subscribe={subscribe} />
  </StrictMode>,
);
