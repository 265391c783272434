// How a new text makes itself noticed while the agent looks elsewhere: a desktop notification
// (the Notification API, which Electron shows natively, as call offers do) that brings the
// console forward on the conversation.
import type { InboundText } from "../../state/texting.js";

export function notifyText(text: InboundText, open: () => void): void {
  if (typeof Notification === "undefined" || Notification.permission !== "granted") return;
  const body = text.message.body.trim() !== "" ? text.message.body : "Sent a picture";
  const notification = new Notification(`Text from ${text.contactName}`, { body, tag: `text-${text.message.id}` });
  notification.onclick = () => {
    window.focus();
    open();
    notification.close();
  };
}
