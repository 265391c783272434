// Desktop notifications in the main process (main/notifications.ts) without an Electron binary:
// the IPC payload checks, and the rules run against stand-ins for Electron's ipcMain, Notification
// and BrowserWindow (Electron is the boundary here, not our component).
import { EventEmitter } from "node:events";
import { beforeEach, describe, expect, it } from "vitest";
import {
  CLOSE_NOTIFICATION_CHANNEL,
  MAX_LIVE_NOTIFICATIONS,
  NOTIFICATION_LIMITS,
  NOTIFY_CHANNEL,
  NotificationRefused,
  parseNotification,
  parseTag,
  registerNotifications,
  type ConsoleWindowHandle,
  type NotificationHandle,
  type NotificationOptions,
} from "../../main/notifications.js";

describe("notification payload", () => {
  it("accepts title, body, tag and an optional urgent flag", () => {
    expect(parseNotification({ title: "Incoming call", body: "Ada (1001)", tag: "c1" })).toEqual({ title: "Incoming call", body: "Ada (1001)", tag: "c1" });
    expect(parseNotification({ title: "Incoming call", body: "", tag: "c1", urgent: true })).toEqual({ title: "Incoming call", body: "", tag: "c1", urgent: true });
    const longest = { title: "t".repeat(NOTIFICATION_LIMITS.title), body: "b".repeat(NOTIFICATION_LIMITS.body), tag: "g".repeat(NOTIFICATION_LIMITS.tag) };
    expect(parseNotification(longest)).toEqual(longest);
  });

  it.each([
    ["nothing", undefined, /must be an object/],
    ["null", null, /must be an object/],
    ["a string", "Incoming call", /must be an object/],
    ["an array", ["Incoming call", "Ada", "c1"], /must be an object/],
    ["no title", { body: "Ada", tag: "c1" }, /title must be a string/],
    ["an empty title", { title: "", body: "Ada", tag: "c1" }, /title must be 1 to 200 characters/],
    ["a title too long", { title: "t".repeat(NOTIFICATION_LIMITS.title + 1), body: "", tag: "c1" }, /title must be 1 to 200/],
    ["a body that is a number", { title: "Call", body: 42, tag: "c1" }, /body must be a string/],
    ["a body too long", { title: "Call", body: "b".repeat(NOTIFICATION_LIMITS.body + 1), tag: "c1" }, /body must be 0 to 1000/],
    ["no tag", { title: "Call", body: "" }, /tag must be a string/],
    ["an empty tag", { title: "Call", body: "", tag: "" }, /tag must be 1 to 200/],
    ["a tag too long", { title: "Call", body: "", tag: "g".repeat(NOTIFICATION_LIMITS.tag + 1) }, /tag must be 1 to 200/],
    ["urgent as a string", { title: "Call", body: "", tag: "c1", urgent: "yes" }, /urgent must be true or false/],
    ["a field it does not know", { title: "Call", body: "", tag: "c1", icon: "file:///etc/passwd" }, /no field "icon"/],
    ["a title that is an object", { title: { toString: (): string => "Call" }, body: "", tag: "c1" }, /title must be a string/],
  ])("refuses %s, saying why", (_label, payload, message) => {
    expect(() => parseNotification(payload)).toThrow(NotificationRefused);
    expect(() => parseNotification(payload)).toThrow(message);
  });

  it("checks a tag to close on its own", () => {
    expect(parseTag("c1")).toBe("c1");
    expect(() => parseTag(7)).toThrow(/tag must be a string/);
    expect(() => parseTag("")).toThrow(NotificationRefused);
  });
});

class FakeNotification extends EventEmitter implements NotificationHandle {
  shown = false;
  closed = false;
  constructor(readonly options: NotificationOptions) {
    super();
  }
  show(): void {
    this.shown = true;
  }
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.emit("close");
  }
}

class FakeWindow implements ConsoleWindowHandle {
  readonly webContents = { id: 1 };
  minimized = false;
  visible = true;
  focused = false;
  destroyed = false;
  readonly calls: string[] = [];
  isDestroyed(): boolean {
    return this.destroyed;
  }
  isMinimized(): boolean {
    return this.minimized;
  }
  isVisible(): boolean {
    return this.visible;
  }
  restore(): void {
    this.calls.push("restore");
    this.minimized = false;
  }
  show(): void {
    this.calls.push("show");
    this.visible = true;
  }
  focus(): void {
    this.calls.push("focus");
    this.focused = true;
  }
}

describe("notifications in the main process", () => {
  type Listener = (event: { sender: unknown }, ...args: unknown[]) => unknown;
  let handlers: Map<string, Listener>;
  let shown: FakeNotification[];
  let window: FakeWindow | null;
  let supported: boolean;

  beforeEach(() => {
    handlers = new Map();
    shown = [];
    window = new FakeWindow();
    supported = true;
    registerNotifications({
      ipcMain: { handle: (channel, listener) => handlers.set(channel, listener) },
      create: (options) => {
        const notification = new FakeNotification(options);
        shown.push(notification);
        return notification;
      },
      supported: () => supported,
      window: () => window,
    });
  });

  /** As ipcMain.handle answers an invoke: the listener's value or its exception, as a promise. */
  async function invoke(channel: string, payload: unknown, sender: unknown = window?.webContents): Promise<unknown> {
    const listener = handlers.get(channel);
    if (listener === undefined) throw new Error(`no handler for ${channel}`);
    return await listener({ sender }, payload);
  }

  function consoleWindow(): FakeWindow {
    if (window === null) throw new Error("no window");
    return window;
  }

  function latest(): FakeNotification {
    const notification = shown.at(-1);
    if (notification === undefined) throw new Error("nothing was shown");
    return notification;
  }

  it("shows the notification and, when clicked, restores, shows and focuses the window", async () => {
    const w = consoleWindow();
    w.minimized = true;
    const outcome = invoke(NOTIFY_CHANNEL, { title: "Text from Ada", body: "Call me back", tag: "text-1" });
    expect(latest().shown).toBe(true);
    expect(latest().options).toEqual({ title: "Text from Ada", body: "Call me back", silent: false, urgency: "normal", timeoutType: "default" });
    expect(w.calls).toEqual([]);
    latest().emit("click");
    await expect(outcome).resolves.toBe("click");
    expect(w.calls).toEqual(["restore", "show", "focus"]);
  });

  it("brings a minimised or hidden window forward at once for an urgent one (a call offer)", async () => {
    const w = consoleWindow();
    w.minimized = true;
    void invoke(NOTIFY_CHANNEL, { title: "Incoming call", body: "Ada", tag: "call-1", urgent: true });
    expect(w.calls).toEqual(["restore", "show", "focus"]);
    expect(latest().options).toMatchObject({ silent: true, urgency: "critical", timeoutType: "never" });

    w.calls.length = 0;
    w.visible = false;
    void invoke(NOTIFY_CHANNEL, { title: "Incoming call", body: "Bob", tag: "call-2", urgent: true });
    expect(w.calls).toEqual(["show", "focus"]);

    // A window already in view is left as the agent has it.
    w.calls.length = 0;
    void invoke(NOTIFY_CHANNEL, { title: "Incoming call", body: "Cy", tag: "call-3", urgent: true });
    expect(w.calls).toEqual([]);
  });

  it("answers close when the page closes it, and a new one with the same tag replaces the old", async () => {
    const first = invoke(NOTIFY_CHANNEL, { title: "Incoming call", body: "Ada", tag: "call-1", urgent: true });
    const firstShown = latest();
    const second = invoke(NOTIFY_CHANNEL, { title: "Incoming call", body: "Ada again", tag: "call-1", urgent: true });
    expect(firstShown.closed).toBe(true);
    await expect(first).resolves.toBe("close");

    await expect(invoke(CLOSE_NOTIFICATION_CHANNEL, "call-1")).resolves.toBeUndefined();
    expect(latest().closed).toBe(true);
    await expect(second).resolves.toBe("close");
    // Closing a tag that is not showing is no error.
    await expect(invoke(CLOSE_NOTIFICATION_CHANNEL, "call-1")).resolves.toBeUndefined();
  });

  it("keeps at most a fixed number at once, closing the oldest", async () => {
    const outcomes = Array.from({ length: MAX_LIVE_NOTIFICATIONS + 1 }, (_, i) => invoke(NOTIFY_CHANNEL, { title: "Text", body: `${i}`, tag: `text-${i}` }));
    await expect(outcomes[0]).resolves.toBe("close");
    expect(shown.filter((n) => !n.closed)).toHaveLength(MAX_LIVE_NOTIFICATIONS);
    expect(shown[1]?.closed).toBe(false);
  });

  it("refuses a bad payload, shows nothing and keeps working", async () => {
    await expect(invoke(NOTIFY_CHANNEL, { title: "x".repeat(5_000), body: "", tag: "t" })).rejects.toThrow(/title must be 1 to 200/);
    await expect(invoke(NOTIFY_CHANNEL, "just a string")).rejects.toThrow(NotificationRefused);
    await expect(invoke(CLOSE_NOTIFICATION_CHANNEL, { tag: "t" })).rejects.toThrow(/tag must be a string/);
    expect(shown).toHaveLength(0);
    void invoke(NOTIFY_CHANNEL, { title: "Text", body: "", tag: "t" });
    expect(shown).toHaveLength(1);
  });

  it("answers only the console window's page", async () => {
    await expect(invoke(NOTIFY_CHANNEL, { title: "Text", body: "", tag: "t" }, { id: 2 })).rejects.toThrow(/console window only/);
    await expect(invoke(CLOSE_NOTIFICATION_CHANNEL, "t", { id: 2 })).rejects.toThrow(/console window only/);
    window = null;
    await expect(invoke(NOTIFY_CHANNEL, { title: "Text", body: "", tag: "t" }, { id: 1 })).rejects.toThrow(/console window only/);
    expect(shown).toHaveLength(0);
  });

  it("says so where the system shows no notifications", async () => {
    supported = false;
    await expect(invoke(NOTIFY_CHANNEL, { title: "Text", body: "", tag: "t" })).rejects.toThrow(/shows no desktop notifications/);
  });

  it("answers close when the user dismisses it", async () => {
    const outcome = invoke(NOTIFY_CHANNEL, { title: "Text", body: "", tag: "t" });
    latest().close();
    await expect(outcome).resolves.toBe("close");
    expect(consoleWindow().calls).toEqual([]);
  });
});
