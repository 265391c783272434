// How a new text makes itself noticed while the agent looks elsewhere: a desktop notification
// (the desktop app's or the tab's, see notify.ts, as call offers) that brings the console forward
// on the conversation.
import { pageNotifier } from "../../notify.js";
import type { InboundText } from "../../state/texting.js";

export function notifyText(text: InboundText, open: () => void): void {
  const body = text.message.body.trim() !== "" ? text.message.body : "Sent a picture";
  pageNotifier()({ title: `Text from ${text.contactName}`, body, tag: `text-${text.message.id}`, onClick: open });
}
