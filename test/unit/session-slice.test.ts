// The session slice through the whole store, with a fake storage and a fake auth API: what the
// agent sees change on sign-in, failure and sign-out, and what is remembered between visits.
import { describe, expect, it } from "vitest";
import { ApiRequestError, type AuthApi, type AuthGrant, type Credentials } from "../../renderer/api/client.js";
import type { KeyValueStorage } from "../../renderer/state/storage.js";
import { createAppStore } from "../../renderer/state/store.js";

const ORIGIN = "http://127.0.0.1:8000";
const GRANT: AuthGrant = { token: "token-1", accountId: "a".repeat(32), ownerId: "b".repeat(32), accountName: "Demo" };
const AGENT: Credentials = { accountName: "demo", username: "agent1", password: "switchboard" };

function fakeStorage(initial: Record<string, string> = {}, options: { failWrites?: boolean } = {}) {
  const items = new Map(Object.entries(initial));
  const storage: KeyValueStorage = {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => {
      if (options.failWrites) throw new Error("QuotaExceededError");
      items.set(key, value);
    },
    removeItem: (key) => {
      if (options.failWrites) throw new Error("SecurityError");
      items.delete(key);
    },
  };
  return { storage, items };
}

interface Pending {
  serverUrl: string;
  credentials: Credentials;
  resolve(grant: AuthGrant): void;
  reject(error: unknown): void;
}

/** An auth API whose answers the test gives by hand, recording what it was asked. */
function fakeAuth() {
  const pending: Pending[] = [];
  const signOuts: { serverUrl: string; token: string }[] = [];
  let signOutFails = false;
  const auth: AuthApi = {
    signIn: (serverUrl, credentials) =>
      new Promise<AuthGrant>((resolve, reject) => pending.push({ serverUrl, credentials, resolve, reject })),
    signOut: (serverUrl, token) => {
      signOuts.push({ serverUrl, token });
      return signOutFails ? Promise.reject(new ApiRequestError("network", 0, "", null, null, "down")) : Promise.resolve();
    },
  };
  return {
    auth,
    pending,
    signOuts,
    failSignOut: () => {
      signOutFails = true;
    },
  };
}

function last<T>(items: T[]): T {
  const item = items.at(-1);
  if (item === undefined) throw new Error("nothing was asked");
  return item;
}

function setup(storageInit: Record<string, string> = {}, storageOptions: { failWrites?: boolean } = {}) {
  const { storage, items } = fakeStorage(storageInit, storageOptions);
  const api = fakeAuth();
  const store = createAppStore({ storage, pageOrigin: ORIGIN, auth: api.auth });
  return { store, storage, items, ...api };
}

describe("session slice", () => {
  it("starts signed out with nothing remembered", () => {
    const { store } = setup();
    const state = store.getState();
    expect(state.session).toBeNull();
    expect(state.signingIn).toBe(false);
    expect(state.signInError).toBeNull();
    expect(state.remembered).toBeNull();
  });

  it("signs in: busy while asking, then holds the session and remembers the login", async () => {
    const { store, storage, pending } = setup();
    const result = store.getState().signIn({ ...AGENT, accountName: " demo ", username: "agent1 " }, { remember: true });

    expect(store.getState().signingIn).toBe(true);
    expect(store.getState().session).toBeNull();
    const request = last(pending);
    expect(request.serverUrl).toBe(ORIGIN);
    expect(request.credentials).toEqual(AGENT);

    request.resolve(GRANT);
    expect(await result).toBe(true);
    const state = store.getState();
    expect(state.signingIn).toBe(false);
    expect(state.signInError).toBeNull();
    expect(state.session).toEqual({
      accountName: "Demo",
      username: "agent1",
      token: "token-1",
      accountId: GRANT.accountId,
      ownerId: GRANT.ownerId,
    });
    expect(state.remembered).toEqual({ accountName: "demo", username: "agent1" });

    // The next visit (a new store on the same storage) starts from the remembered login, not signed in.
    const next = createAppStore({ storage, pageOrigin: ORIGIN, auth: fakeAuth().auth }).getState();
    expect(next.remembered).toEqual({ accountName: "demo", username: "agent1" });
    expect(next.session).toBeNull();
  });

  it("never stores the password or the token", async () => {
    const { store, items, pending } = setup();
    const result = store.getState().signIn(AGENT, { remember: true });
    last(pending).resolve(GRANT);
    await result;
    const stored = [...items.values()].join("\n");
    expect(stored).not.toContain("switchboard");
    expect(stored).not.toContain("token-1");
  });

  it("shows why sign-in failed and stays signed out, keeping what was remembered", async () => {
    const { store, pending } = setup({ "switchboard.remembered": JSON.stringify({ accountName: "demo", username: "agent2" }) });
    const result = store.getState().signIn({ ...AGENT, password: "wrong" }, { remember: true });
    last(pending).reject(new ApiRequestError("http", 401, "invalid_credentials", {}, "req-1", "401"));

    expect(await result).toBe(false);
    const state = store.getState();
    expect(state.session).toBeNull();
    expect(state.signingIn).toBe(false);
    expect(state.signInError).toBe("The account name, username or password is not right.");
    expect(state.remembered).toEqual({ accountName: "demo", username: "agent2" });
  });

  it.each([
    [new ApiRequestError("http", 404, "not_found", {}, null, "404"), /server at http:\/\/127\.0\.0\.1:8000 does not offer sign-in/],
    [new ApiRequestError("network", 0, "", null, null, "down"), /Cannot reach the server at http:\/\/127\.0\.0\.1:8000/],
    [new ApiRequestError("http", 500, "unspecified_fault", {}, null, "500"), /problem signing you in \(500 unspecified_fault\)/],
    [new ApiRequestError("malformed", 201, "", null, null, "bad"), /answer the console does not understand/],
    [new TypeError("boom"), /Sign-in failed unexpectedly/],
  ])("words a %s for the agent", async (error, message) => {
    const { store, pending } = setup();
    const result = store.getState().signIn(AGENT, { remember: true });
    last(pending).reject(error);
    await result;
    expect(store.getState().signInError).toMatch(message);
  });

  it("clears the last error when the agent tries again", async () => {
    const { store, pending } = setup();
    const first = store.getState().signIn(AGENT, { remember: true });
    last(pending).reject(new ApiRequestError("http", 401, "invalid_credentials", {}, null, "401"));
    await first;
    expect(store.getState().signInError).not.toBeNull();

    const second = store.getState().signIn(AGENT, { remember: true });
    expect(store.getState().signInError).toBeNull();
    last(pending).resolve(GRANT);
    expect(await second).toBe(true);
  });

  it("asks for all three fields before calling the server", async () => {
    const { store, pending } = setup();
    expect(await store.getState().signIn({ ...AGENT, username: "  " }, { remember: true })).toBe(false);
    expect(await store.getState().signIn({ ...AGENT, password: "" }, { remember: true })).toBe(false);
    expect(pending).toHaveLength(0);
    expect(store.getState().signInError).toBe("Enter the account name, username and password.");
  });

  it("forgets the remembered login when the agent unticks remember", async () => {
    const { store, storage, pending } = setup({ "switchboard.remembered": JSON.stringify({ accountName: "demo", username: "agent2" }) });
    expect(store.getState().remembered).toEqual({ accountName: "demo", username: "agent2" });
    const result = store.getState().signIn(AGENT, { remember: false });
    last(pending).resolve(GRANT);
    await result;
    expect(store.getState().remembered).toBeNull();
    expect(createAppStore({ storage, pageOrigin: ORIGIN, auth: fakeAuth().auth }).getState().remembered).toBeNull();
  });

  it("signs out at once, revokes the token at the server, and keeps the remembered login", async () => {
    const { store, pending, signOuts } = setup();
    const result = store.getState().signIn(AGENT, { remember: true });
    last(pending).resolve(GRANT);
    await result;

    store.getState().signOut();
    expect(store.getState().session).toBeNull();
    expect(signOuts).toEqual([{ serverUrl: ORIGIN, token: "token-1" }]);
    expect(store.getState().remembered).toEqual({ accountName: "demo", username: "agent1" });
  });

  it("is signed out even when the server cannot revoke the token", async () => {
    const { store, pending, signOuts, failSignOut } = setup();
    failSignOut();
    const result = store.getState().signIn(AGENT, { remember: true });
    last(pending).resolve(GRANT);
    await result;
    store.getState().signOut();
    // Let the rejected revoke settle: an unhandled rejection would fail this test run.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(signOuts).toHaveLength(1);
    expect(store.getState().session).toBeNull();
  });

  it("ignores a sign-in answer that arrives after the agent signed out", async () => {
    const { store, pending } = setup();
    const result = store.getState().signIn(AGENT, { remember: true });
    store.getState().signOut();
    expect(store.getState().signingIn).toBe(false);
    last(pending).resolve(GRANT);
    expect(await result).toBe(false);
    expect(store.getState().session).toBeNull();
  });

  it("treats corrupt or unwritable storage as nothing remembered, and still signs in", async () => {
    expect(setup({ "switchboard.remembered": "{not json" }).store.getState().remembered).toBeNull();
    expect(setup({ "switchboard.remembered": JSON.stringify({ accountName: 7 }) }).store.getState().remembered).toBeNull();

    const { store, pending } = setup({}, { failWrites: true });
    const result = store.getState().signIn(AGENT, { remember: true });
    last(pending).resolve(GRANT);
    expect(await result).toBe(true);
    expect(store.getState().session?.token).toBe("token-1");
  });

  it("signs in to the server address chosen in settings", async () => {
    const { store, storage, pending } = setup();
    expect(store.getState().serverUrl).toBe(ORIGIN);
    expect(store.getState().setServerUrl("ftp://example.com")).toMatch(/http:\/\/host:port/);
    expect(store.getState().setServerUrl("https://switchboard.example.com/api/")).toBeNull();

    void store.getState().signIn(AGENT, { remember: true });
    expect(last(pending).serverUrl).toBe("https://switchboard.example.com/api");
    // The choice outlives the page; clearing it goes back to the page's own server.
    expect(createAppStore({ storage, pageOrigin: ORIGIN, auth: fakeAuth().auth }).getState().serverUrl).toBe(
      "https://switchboard.example.com/api",
    );
    expect(store.getState().setServerUrl("")).toBeNull();
    expect(store.getState().serverUrl).toBe(ORIGIN);
    expect(store.getState().serverUrlIsDefault).toBe(true);
  });
});
