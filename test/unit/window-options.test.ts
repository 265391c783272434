// The console window's hardening and policies, and the server supervisor's restart rules, checked
// as pure functions: no Electron binary needed.
import { EventEmitter } from "node:events";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { versionFromArgv } from "../../main/desktop-bridge.js";
import {
  ServerSupervisor,
  serverArguments,
  serverPort,
  type ServerChild,
  type SupervisorOptions,
} from "../../main/server-process.js";
import { externalLink, isAppOrigin, permissionGranted, withSecurityHeaders } from "../../main/web-policy.js";
import { CONSOLE_CSP, DOCS_CSP } from "../../server/http/csp.js";
import { windowOptions } from "../../main/window.js";

const APP = "http://127.0.0.1:8000";

describe("console window options", () => {
  const options = windowOptions({ mainDir: "/opt/Switchboard/resources/app.asar/out/main", version: "0.1.0" });
  const web = options.webPreferences ?? {};

  it("isolates the renderer from Node", () => {
    expect(web.contextIsolation).toBe(true);
    expect(web.sandbox).toBe(true);
    expect(web.nodeIntegration).toBe(false);
    expect(web.nodeIntegrationInWorker).toBe(false);
    expect(web.nodeIntegrationInSubFrames).toBe(false);
    expect(web.webSecurity).toBe(true);
    expect(web.allowRunningInsecureContent).toBe(false);
    expect(web.webviewTag).toBe(false);
  });

  it("loads the CommonJS preload built beside the main process", () => {
    expect(web.preload?.replaceAll("\\", "/")).toBe("/opt/Switchboard/resources/app.asar/out/preload/preload.cjs");
  });

  it("hands the version to the preload, which reads it back from argv", () => {
    const argv = ["/opt/Switchboard/switchboard", "--type=renderer", ...(web.additionalArguments ?? [])];
    expect(versionFromArgv(argv)).toBe("0.1.0");
    expect(versionFromArgv(["/opt/Switchboard/switchboard"])).toBe("");
  });
});

describe("security headers the session enforces", () => {
  it("gives the app's pages the server's strict policy, replacing whatever the answer carried", () => {
    const headers = withSecurityHeaders(`${APP}/agent`, { "content-security-policy": ["default-src *"], "Content-Type": ["text/html"] }, APP);
    expect(headers).toEqual({
      "Content-Type": ["text/html"],
      "Content-Security-Policy": [CONSOLE_CSP],
      "X-Frame-Options": ["DENY"],
      "X-Content-Type-Options": ["nosniff"],
    });
    expect(CONSOLE_CSP).toContain("script-src 'self';");
    expect(CONSOLE_CSP).toContain("frame-ancestors 'none'");
    expect(CONSOLE_CSP).not.toContain("unsafe-inline");
  });

  it("gives the docs page its own policy and the API none, and leaves other origins alone", () => {
    expect(withSecurityHeaders(`${APP}/docs/`, {}, APP)["Content-Security-Policy"]).toEqual([DOCS_CSP]);
    expect(withSecurityHeaders(`${APP}/v2/accounts`, {}, APP)).not.toHaveProperty("Content-Security-Policy");
    const hosted = { "content-type": ["application/json"] };
    expect(withSecurityHeaders("https://api.hosted.example/v2/accounts", hosted, APP)).toBe(hosted);
  });
});

describe("app origin", () => {
  it("accepts pages of the app itself", () => {
    expect(isAppOrigin(`${APP}/`, APP)).toBe(true);
    expect(isAppOrigin(`${APP}/agent?queue=1#calls`, APP)).toBe(true);
  });

  it.each([
    ["another port", "http://127.0.0.1:8001/"],
    ["another host", "http://evil.example:8000/"],
    ["localhost, a different origin", "http://localhost:8000/"],
    ["https on the same port", "https://127.0.0.1:8000/"],
    ["a file", "file:///etc/passwd"],
    ["javascript", "javascript:alert(1)"],
    ["data", "data:text/html,<p>hi</p>"],
    ["about:blank", "about:blank"],
    ["not a URL", "127.0.0.1:8000"],
  ])("refuses %s", (_label, url) => {
    expect(isAppOrigin(url, APP)).toBe(false);
  });

  it("sends only foreign http(s) links to the system browser", () => {
    expect(externalLink("https://docs.example.com/queues", APP)).toBe("https://docs.example.com/queues");
    expect(externalLink(`${APP}/wallboard`, APP)).toBeNull();
    expect(externalLink("file:///etc/passwd", APP)).toBeNull();
    expect(externalLink("javascript:alert(1)", APP)).toBeNull();
    expect(externalLink("smb://share/x", APP)).toBeNull();
  });
});

describe("permission decisions", () => {
  it("grants the microphone to the app", () => {
    expect(permissionGranted({ permission: "media", origin: APP, mediaTypes: ["audio"] }, APP)).toBe(true);
    expect(permissionGranted({ permission: "media", origin: `${APP}/agent`, mediaTypes: ["audio"] }, APP)).toBe(true);
  });

  it("grants notifications to the app, for call offers in the background", () => {
    expect(permissionGranted({ permission: "notifications", origin: APP, mediaTypes: [] }, APP)).toBe(true);
  });

  it("refuses the camera, even together with the microphone", () => {
    expect(permissionGranted({ permission: "media", origin: APP, mediaTypes: ["video"] }, APP)).toBe(false);
    expect(permissionGranted({ permission: "media", origin: APP, mediaTypes: ["audio", "video"] }, APP)).toBe(false);
    expect(permissionGranted({ permission: "media", origin: APP, mediaTypes: [] }, APP)).toBe(false);
    expect(permissionGranted({ permission: "media", origin: APP, mediaTypes: ["unknown"] }, APP)).toBe(false);
  });

  it.each(["geolocation", "display-capture", "clipboard-read", "midi", "openExternal", "fullscreen", "unknown"])(
    "refuses %s to the app",
    (permission) => {
      expect(permissionGranted({ permission, origin: APP, mediaTypes: ["audio"] }, APP)).toBe(false);
    },
  );

  it.each(["http://127.0.0.1:8001", "http://localhost:8000", "https://evil.example", "file:///", "null"])(
    "refuses the microphone and notifications to %s",
    (origin) => {
      expect(permissionGranted({ permission: "media", origin, mediaTypes: ["audio"] }, APP)).toBe(false);
      expect(permissionGranted({ permission: "notifications", origin, mediaTypes: [] }, APP)).toBe(false);
    },
  );
});

describe("server arguments", () => {
  const location = { port: 8000, dataDir: "/home/agent/.config/Switchboard", appPath: "/src/switchboard" };

  it("points a development run at the assets in the tree", () => {
    const args = serverArguments({ ...location, isPackaged: false, resourcesPath: "/usr/lib/electron/resources" });
    expect(args.map((a) => a.replaceAll("\\", "/"))).toEqual([
      "--port", "8000", "--data-dir", "/home/agent/.config/Switchboard", "--assets-dir", "/src/switchboard/assets",
      "--demo-password-file", "/home/agent/.config/Switchboard/demo-password",
    ]);
  });

  it("points a packaged app at the assets beside app.asar", () => {
    const args = serverArguments({ ...location, isPackaged: true, resourcesPath: "/opt/Switchboard/resources" });
    expect(args.slice(-4, -2).map((a) => a.replaceAll("\\", "/"))).toEqual(["--assets-dir", "/opt/Switchboard/resources/assets"]);
  });

  it("keeps the fixed port unless SWITCHBOARD_PORT names a valid one", () => {
    expect(serverPort(undefined)).toBe(8000);
    expect(serverPort("")).toBe(8000);
    expect(serverPort("eighty")).toBe(8000);
    expect(serverPort("70000")).toBe(8000);
    expect(serverPort("8123")).toBe(8123);
  });
});

class FakeChild extends EventEmitter implements ServerChild {
  readonly stderr = new PassThrough();
  killed = false;
  kill(): boolean {
    this.killed = true;
    return true;
  }
  ready(url = APP): void {
    this.emit("message", { type: "ready", url });
  }
  exit(code: number): void {
    this.emit("exit", code);
  }
}

describe("server supervisor", () => {
  let children: FakeChild[];
  let readies: string[];
  let fatal: string[];
  let trouble: string[];

  beforeEach(() => {
    vi.useFakeTimers();
    children = [];
    readies = [];
    fatal = [];
    trouble = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function supervisor(overrides: Partial<SupervisorOptions> = {}): ServerSupervisor {
    return new ServerSupervisor({
      fork: () => {
        const child = new FakeChild();
        children.push(child);
        return child;
      },
      modulePath: "/app/out/main/server.js",
      args: [],
      onReady: (url) => readies.push(url),
      onFatal: (message) => fatal.push(message),
      onTrouble: (message) => trouble.push(message),
      now: Date.now,
      setTimer: (fire, ms) => {
        const timer = setTimeout(fire, ms);
        return () => clearTimeout(timer);
      },
      backoffMs: [500, 2_000],
      healthyAfterMs: 30_000,
      readyTimeoutMs: 10_000,
      ...overrides,
    });
  }

  function latest(): FakeChild {
    const child = children.at(-1);
    if (child === undefined) throw new Error("no server was forked");
    return child;
  }

  it("reports ready, and after a crash restarts with a growing back-off and reports ready again", () => {
    const s = supervisor();
    s.start();
    latest().ready();
    expect(readies).toEqual([APP]);

    latest().exit(1);
    expect(s.stateName).toBe("waiting");
    vi.advanceTimersByTime(499);
    expect(children).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(children).toHaveLength(2);
    latest().ready();
    expect(readies).toEqual([APP, APP]);

    latest().exit(1);
    vi.advanceTimersByTime(1_999);
    expect(children).toHaveLength(2);
    vi.advanceTimersByTime(1);
    expect(children).toHaveLength(3);
    expect(trouble).toHaveLength(2);
  });

  it("starts the back-off over once a restarted server has stayed up", () => {
    const s = supervisor();
    s.start();
    latest().ready();
    latest().exit(1);
    vi.advanceTimersByTime(500);
    latest().ready();
    vi.advanceTimersByTime(30_000);
    latest().exit(1);
    vi.advanceTimersByTime(500);
    expect(children).toHaveLength(3);
  });

  it("gives up on a first start that fails, with the server's own words", () => {
    const s = supervisor();
    s.start();
    latest().stderr.write("switchboard: cannot start: listen EADDRINUSE 127.0.0.1:8000 (the port is taken)\n");
    latest().exit(1);
    vi.advanceTimersByTime(60_000);
    expect(children).toHaveLength(1);
    expect(s.stateName).toBe("failed");
    expect(fatal).toEqual(["switchboard: cannot start: listen EADDRINUSE 127.0.0.1:8000 (the port is taken)"]);
  });

  it("prefers the server's error message to its stderr", () => {
    const s = supervisor();
    s.start();
    latest().emit("message", { type: "error", message: "data dir is read-only" });
    latest().exit(1);
    expect(fatal).toEqual(["server error: data dir is read-only"]);
  });

  it("kills a server that never says ready", () => {
    const s = supervisor();
    s.start();
    vi.advanceTimersByTime(10_000);
    expect(latest().killed).toBe(true);
    latest().exit(143);
    expect(fatal[0]).toMatch(/did not report ready/);
  });

  it("stops with SIGTERM and waits for the exit, without restarting", async () => {
    const s = supervisor();
    s.start();
    latest().ready();
    const stopped = s.stop(3_000);
    expect(latest().killed).toBe(true);
    latest().exit(0);
    await stopped;
    vi.advanceTimersByTime(60_000);
    expect(children).toHaveLength(1);
    expect(s.stateName).toBe("stopped");
  });

  it("stops after the grace period when the server lingers", async () => {
    const s = supervisor();
    s.start();
    latest().ready();
    const stopped = s.stop(3_000);
    await vi.advanceTimersByTimeAsync(3_000);
    await stopped;
    expect(s.stateName).toBe("stopped");
  });

  it("cancels a pending restart on stop", async () => {
    const s = supervisor();
    s.start();
    latest().ready();
    latest().exit(1);
    await s.stop(3_000);
    vi.advanceTimersByTime(60_000);
    expect(children).toHaveLength(1);
  });
});
