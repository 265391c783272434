// What the Texting navigation entry and the window title count: conversations with unread texts
// (not texts), and the title's form, "(n) Switchboard", plain when nothing is unread.
import { describe, expect, it } from "vitest";
import type { ConversationRow } from "../../renderer/api/texting.js";
import { EMPTY_TEXTING, unreadConversations, windowTitle, type TextingState } from "../../renderer/state/texting.js";

function row(id: string, unread: number): ConversationRow {
  return { id, phoneNumber: `+1415555${id}`, fullName: id, email: "", optedOut: false, optOutKeyword: "", lastMessage: null, lastMessageDate: null, unread };
}

function texting(conversations: ConversationRow[]): TextingState {
  return { ...EMPTY_TEXTING, status: "ready", conversations };
}

describe("unread texting count", () => {
  it("counts conversations with unread texts, however many texts each holds", () => {
    expect(unreadConversations(texting([]))).toBe(0);
    expect(unreadConversations(texting([row("0001", 0), row("0002", 0)]))).toBe(0);
    expect(unreadConversations(texting([row("0001", 5), row("0002", 0), row("0003", 1)]))).toBe(2);
  });

  it("puts the count before the app's name in the window title, and nothing when it is 0", () => {
    expect(windowTitle(0)).toBe("Switchboard");
    expect(windowTitle(1)).toBe("(1) Switchboard");
    expect(windowTitle(12)).toBe("(12) Switchboard");
  });
});
