// Texting behind every view: loads the user's conversations once signed in (so unread counts and
// notifications work before the pane is opened), notifies new texts the agent is not looking at,
// puts the count of unread conversations in the window title (Electron's window follows
// document.title), and forgets everything at sign-out. Renders nothing; the console frame mounts it.
import { useEffect, useRef } from "react";
import { useNavigate } from "react-router-dom";
import { useAppStore, useAppStoreApi } from "../../state/context.js";
import { APP_TITLE, unreadConversations, windowTitle } from "../../state/texting.js";
import { notifyText } from "./notifier.js";

export const TEXTING_PATH = "/texting";

export function TextingWatcher() {
  const who = useAppStore((state) => (state.session === null ? null : `${state.session.accountId}/${state.session.ownerId}`));
  const store = useAppStoreApi();
  // useNavigate answers a new function at each change of view; the effect below must not run
  // again for it (that would forget the open conversation and read everything again), so it
  // reads the latest one from a ref.
  const navigateNow = useNavigate();
  const navigate = useRef(navigateNow);
  useEffect(() => {
    navigate.current = navigateNow;
  }, [navigateNow]);
  const unread = useAppStore((state) => unreadConversations(state.texting));

  useEffect(() => {
    document.title = windowTitle(unread);
    // Signed out, the console (and this) unmount: the title must not keep the old count.
    return () => {
      document.title = APP_TITLE;
    };
  }, [unread]);

  useEffect(() => {
    if (who === null) return;
    const state = store.getState();
    void state.loadTexting();
    const stop = state.onTextingInbound((text) =>
      notifyText(text, () => {
        void navigate.current(TEXTING_PATH);
        void store.getState().openConversation(text.message.conversationId);
      }),
    );
    return () => {
      stop();
      store.getState().clearTexting();
    };
  }, [who, store]);

  return null;
}
