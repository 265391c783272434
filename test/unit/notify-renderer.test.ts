// The console's notification chooser (renderer/notify.ts): the desktop app's window.desktop.notify
// when the page has it, else the tab's Notification API (asking for permission first), else
// nothing. The page's globals are stand-ins: window.desktop and the browser's Notification are
// boundaries, not our components.
import { describe, expect, it } from "vitest";
import { MAX_BODY, notifierFor, shorten, type NotifyGlobals } from "../../renderer/notify.js";

type Request = Parameters<NonNullable<NonNullable<NotifyGlobals["desktop"]>["notify"]>>[0];

function fakeDesktop() {
  const requests: Request[] = [];
  const closed: string[] = [];
  const settle = new Map<string, (outcome: "click" | "close") => void>();
  let refuse: string | null = null;
  return {
    requests,
    closed,
    settle,
    refuseWith(message: string) {
      refuse = message;
    },
    bridge: {
      notify(request: Request): Promise<"click" | "close"> {
        requests.push(request);
        if (refuse !== null) return Promise.reject(new Error(refuse));
        return new Promise((resolve) => settle.set(request.tag, resolve));
      },
      async closeNotification(tag: string): Promise<void> {
        closed.push(tag);
        settle.get(tag)?.("close");
      },
    },
  };
}

class FakeTabNotification {
  static permission = "granted";
  static asked = 0;
  static answer = "granted";
  static made: FakeTabNotification[] = [];
  static async requestPermission(): Promise<string> {
    FakeTabNotification.asked++;
    FakeTabNotification.permission = FakeTabNotification.answer;
    return FakeTabNotification.answer;
  }
  onclick: (() => void) | null = null;
  closed = false;
  constructor(
    readonly title: string,
    readonly options: { body: string; tag: string; requireInteraction: boolean },
  ) {
    FakeTabNotification.made.push(this);
  }
  close(): void {
    this.closed = true;
  }
}

function tabApi(permission: string, answer = "granted"): typeof FakeTabNotification {
  FakeTabNotification.permission = permission;
  FakeTabNotification.answer = answer;
  FakeTabNotification.asked = 0;
  FakeTabNotification.made = [];
  return FakeTabNotification;
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("in the desktop app", () => {
  it("goes through window.desktop.notify, not the tab's API, and runs onClick after a click", async () => {
    const desktop = fakeDesktop();
    const Tab = tabApi("granted");
    let focused = 0;
    let opened = 0;
    const notify = notifierFor({ desktop: desktop.bridge, Notification: Tab, focus: () => focused++ });
    const shown = notify({ title: "Text from Ada", body: "Call me back", tag: "text-1", onClick: () => opened++ });
    expect(shown).not.toBeNull();
    expect(desktop.requests).toEqual([{ title: "Text from Ada", body: "Call me back", tag: "text-1" }]);
    expect(Tab.made).toHaveLength(0);
    desktop.settle.get("text-1")?.("click");
    await flush();
    // The app brings its window forward itself; the page only acts on the click.
    expect(opened).toBe(1);
    expect(focused).toBe(0);
  });

  it("marks call offers urgent and closes them through the app", async () => {
    const desktop = fakeDesktop();
    let opened = 0;
    const shown = notifierFor({ desktop: desktop.bridge })({ title: "Incoming call", body: "Ada", tag: "call-1", urgent: true, onClick: () => opened++ });
    expect(desktop.requests[0]).toEqual({ title: "Incoming call", body: "Ada", tag: "call-1", urgent: true });
    shown?.close();
    shown?.close();
    await flush();
    expect(desktop.closed).toEqual(["call-1"]);
    expect(opened).toBe(0);
  });

  it("shortens a long text to what a notification shows, within the app's limits", () => {
    const desktop = fakeDesktop();
    notifierFor({ desktop: desktop.bridge })({ title: "Text from Ada", body: "x".repeat(1_600), tag: "text-2" });
    expect(desktop.requests[0]?.body).toHaveLength(MAX_BODY);
    expect(desktop.requests[0]?.body.endsWith("…")).toBe(true);
    expect(shorten("short", 10)).toBe("short");
  });

  it("reports a refusal by the app without throwing", async () => {
    const desktop = fakeDesktop();
    desktop.refuseWith("title must be 1 to 200 characters long");
    const warnings: unknown[][] = [];
    const shown = notifierFor({ desktop: desktop.bridge, console: { warn: (...data) => warnings.push(data) } })({ title: "T", body: "", tag: "t" });
    expect(shown).not.toBeNull();
    await flush();
    expect(String(warnings[0]?.[1])).toMatch(/title must be/);
  });

  it("uses the tab's API under an older desktop app without notify", () => {
    const Tab = tabApi("granted");
    notifierFor({ desktop: {}, Notification: Tab })({ title: "Incoming call", body: "Ada", tag: "call-1" });
    expect(Tab.made).toHaveLength(1);
  });
});

describe("in a browser tab", () => {
  it("shows it with the Notification API; a click focuses the window, closes it and runs onClick", () => {
    const Tab = tabApi("granted");
    let focused = 0;
    let opened = 0;
    notifierFor({ Notification: Tab, focus: () => focused++ })({ title: "Incoming call", body: "Ada", tag: "call-1", urgent: true, onClick: () => opened++ });
    const made = Tab.made[0];
    expect(made?.title).toBe("Incoming call");
    expect(made?.options).toEqual({ body: "Ada", tag: "call-1", requireInteraction: true });
    made?.onclick?.();
    expect(focused).toBe(1);
    expect(opened).toBe(1);
    expect(made?.closed).toBe(true);
  });

  it("asks for permission when nobody has answered, then shows it", async () => {
    const Tab = tabApi("default", "granted");
    notifierFor({ Notification: Tab })({ title: "Text from Ada", body: "hi", tag: "text-1" });
    expect(Tab.asked).toBe(1);
    await flush();
    expect(Tab.made).toHaveLength(1);
    expect(Tab.made[0]?.options.requireInteraction).toBe(false);
  });

  it("shows nothing when the permission is refused, now or when asked", async () => {
    const denied = tabApi("denied");
    expect(notifierFor({ Notification: denied })({ title: "T", body: "", tag: "t" })).toBeNull();
    expect(denied.asked).toBe(0);

    const refusing = tabApi("default", "denied");
    notifierFor({ Notification: refusing })({ title: "T", body: "", tag: "t" });
    await flush();
    expect(refusing.made).toHaveLength(0);
  });

  it("does not show one closed while the permission was being asked", async () => {
    const Tab = tabApi("default", "granted");
    notifierFor({ Notification: Tab })({ title: "Incoming call", body: "Ada", tag: "call-1" })?.close();
    await flush();
    expect(Tab.made).toHaveLength(0);
  });

  it("closes a shown one", () => {
    const Tab = tabApi("granted");
    notifierFor({ Notification: Tab })({ title: "Incoming call", body: "Ada", tag: "call-1" })?.close();
    expect(Tab.made[0]?.closed).toBe(true);
  });
});

it("does nothing where the page has neither", () => {
  expect(notifierFor({})({ title: "T", body: "", tag: "t" })).toBeNull();
});
