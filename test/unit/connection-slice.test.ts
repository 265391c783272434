// The connection slice with the real event websocket client over fake sockets and a hand-driven
// clock: subscribing with the token, going offline with a back-off the banner can count down,
// resubscribing with `since` the last sequence seen, never handing an event on twice, and a
// refused token ending the session.
import { describe, expect, it } from "vitest";
import type { AuthApi } from "../../renderer/api/client.js";
import { EventStream, type PlatformEvent, type SocketHandlers, type SocketLike } from "../../renderer/api/events.js";
import type { PlatformApi } from "../../renderer/api/platform.js";
import type { Clock } from "../../renderer/clock.js";
import { memoryStorage } from "../../renderer/state/storage.js";
import { createAppStore } from "../../renderer/state/store.js";

const ACCOUNT = "a".repeat(32);

function fixture() {
  let now = 5_000;
  const timers: { at: number; run: () => void; live: boolean }[] = [];
  const clock: Clock = {
    now: () => now,
    after(ms, run) {
      const t = { at: now + ms, run, live: true };
      timers.push(t);
      return () => void (t.live = false);
    },
  };
  const advance = (ms: number) => {
    const end = now + ms;
    for (;;) {
      const due = timers.filter((t) => t.live && t.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      due.live = false;
      now = due.at;
      due.run();
    }
    now = end;
  };
  const sockets: { url: string; handlers: SocketHandlers; sent: Record<string, unknown>[]; closed: boolean }[] = [];
  const openSocket = (url: string, handlers: SocketHandlers): SocketLike => {
    const socket = { url, handlers, sent: [] as Record<string, unknown>[], closed: false };
    sockets.push(socket);
    return {
      get isOpen() {
        return !socket.closed;
      },
      send: (data) => void socket.sent.push(JSON.parse(data) as Record<string, unknown>),
      close: () => void (socket.closed = true),
    };
  };
  const platform: PlatformApi = {
    user: async (id) => ({ id, username: "agent1", firstName: "Alex", lastName: "Agent", isAdmin: false, canMonitor: false, isTrainer: false, presenceId: "1002" }),
    devicesOf: async () => [],
    sipCredentials: async () => ({ username: "u", password: "p", realm: "r" }),
    directory: async () => [],
    recentCalls: async () => [],
    liveCallIds: async () => [],
    transfer: async () => undefined,
    merge: async () => undefined,
  };
  const auth: AuthApi = {
    signIn: async () => ({ token: "token-1", accountId: ACCOUNT, ownerId: "b".repeat(32), accountName: "demo" }),
    signOut: async () => undefined,
  };
  const store = createAppStore({
    storage: memoryStorage(),
    pageOrigin: "http://127.0.0.1:8000",
    auth,
    clock,
    random: () => 1,
    platform: () => platform,
    eventStream: (options) => new EventStream({ ...options, openSocket }),
  });
  const received: PlatformEvent[] = [];
  store.getState().onPlatformEvent((e) => received.push(e));
  const socket = () => {
    const s = sockets.at(-1);
    if (!s) throw new Error("no socket");
    return s;
  };
  /** The server's side: accept the subscription the socket sent. */
  const subscribed = () => {
    const s = socket();
    s.handlers.open();
    const request = s.sent.at(-1);
    s.handlers.message(JSON.stringify({ action: "reply", request_id: request?.request_id, status: "success", data: { subscribed: [] } }));
    return request;
  };
  const event = (seq: number) =>
    socket().handlers.message(JSON.stringify({ action: "event", seq, name: "CHANNEL_CREATE", routing_key: `call.CHANNEL_CREATE.c${seq}`, account_id: ACCOUNT, data: { n: seq } }));
  return { store, advance, sockets, socket, subscribed, event, received, now: () => now };
}

describe("the event websocket through the connection slice", () => {
  it("subscribes with the token and account, then goes offline with a back-off and resumes with since", async () => {
    const f = fixture();
    await f.store.getState().signIn({ accountName: "demo", username: "agent1", password: "pw" }, { remember: false });
    await f.store.getState().connect();
    expect(f.socket().url).toBe("ws://127.0.0.1:8000/events");
    expect(f.store.getState().connection.events).toBe("connecting");
    const first = f.subscribed();
    expect(first).toMatchObject({ action: "subscribe", auth_token: "token-1", data: { account_id: ACCOUNT } });
    expect(first?.data).not.toHaveProperty("since");
    expect(f.store.getState().connection.events).toBe("online");
    f.event(7);
    f.event(8);

    f.socket().handlers.close(1006, "");
    const offline = f.store.getState().connection;
    expect(offline.events).toBe("offline");
    // random() = 1: the first retry waits the whole first step, 1 s.
    expect(offline.eventsRetryAt).toBe(f.now() + 1000);
    f.advance(999);
    expect(f.sockets).toHaveLength(1);
    f.advance(1);
    expect(f.sockets).toHaveLength(2);
    // Down again: the next wait doubles.
    f.socket().handlers.close(1006, "");
    expect(f.store.getState().connection.eventsRetryAt).toBe(f.now() + 2000);
    f.advance(2000);
    const resumed = f.subscribed();
    expect(resumed?.data).toMatchObject({ since: 8 });
    // The catch-up overlaps what was seen: each sequence is handed on once.
    f.event(8);
    f.event(9);
    expect(f.received.map((e) => e.seq)).toEqual([7, 8, 9]);
    expect(f.store.getState().connection).toMatchObject({ events: "online", eventsRetryAt: null, eventsError: null });
  });

  it("a refused token ends the session, keeping it to resume", async () => {
    const f = fixture();
    await f.store.getState().signIn({ accountName: "demo", username: "agent1", password: "pw" }, { remember: false });
    await f.store.getState().connect();
    f.socket().handlers.open();
    const request = f.socket().sent.at(-1);
    f.socket().handlers.message(JSON.stringify({ action: "reply", request_id: request?.request_id, status: "error", data: { errors: ["failed to authenticate token"] } }));
    expect(f.store.getState().session).toBeNull();
    expect(f.store.getState().expiredSession?.username).toBe("agent1");
    f.advance(60_000);
    expect(f.sockets).toHaveLength(1);
  });
});
