// The admin pages' list machinery (renderer/state/resource.ts) on a store of its own with a fake
// server whose answers the test holds back or refuses: reading, creating, replacing, deleting, a
// refusal that changes nothing, a slow earlier read that must not overwrite a newer one, a failed
// read tried again, and a change shown at once and put back when refused.
import { describe, expect, it } from "vitest";
import { createStore } from "zustand/vanilla";
import type { AccountConnection } from "../../renderer/api/account.js";
import { ApiRequestError } from "../../renderer/api/client.js";
import { emptyResource, homeIn, resourceDocuments, resourceList, type ResourceState } from "../../renderer/state/resource.js";
import { deferred } from "../helpers/console-store.js";
import { poll } from "../helpers/poll.js";

interface Thing {
  id: string;
  name: string;
}

interface ThingsState extends ResourceState<Thing> {
  /** Read with the list, to show a list's own fields land with its rows. */
  total: number;
}

const CONNECTION: AccountConnection = { serverUrl: "http://127.0.0.1:1", token: "t", accountId: "a".repeat(32) };
const httpError = (status: number) => new ApiRequestError("http", status, "", null, null, `answered ${status}`);
const unreachable = () => new ApiRequestError("network", 0, "", null, null, "no answer");

/** A server of things; `hold` keeps the next list answer back until the test settles it. */
function fakeServer() {
  const things = new Map<string, Thing>([["t1", { id: "t1", name: "One" }]]);
  const asked: string[] = [];
  const refusing = new Map<string, unknown>();
  const held: ReturnType<typeof deferred<Thing[]>>[] = [];
  let holdNext = 0;
  let nextId = 1;
  const guard = (what: string) => {
    asked.push(what);
    const refusal = refusing.get(what);
    if (refusal !== undefined) throw refusal;
  };
  return {
    things,
    asked,
    held,
    refuse: (what: string, error: unknown) => refusing.set(what, error),
    heal: (what: string) => refusing.delete(what),
    hold: (count = 1) => {
      holdNext = count;
    },
    async list(): Promise<Thing[]> {
      guard("list");
      if (holdNext > 0) {
        holdNext -= 1;
        const answer = deferred<Thing[]>();
        held.push(answer);
        return answer.promise;
      }
      return [...things.values()];
    },
    async read(id: string): Promise<Thing> {
      guard("read");
      const thing = things.get(id);
      if (thing === undefined) throw httpError(404);
      return thing;
    },
    async save(thing: Thing): Promise<Thing> {
      guard("save");
      const saved = { ...thing, id: thing.id === "" ? `t${++nextId}` : thing.id };
      things.set(saved.id, saved);
      return saved;
    },
    async remove(id: string): Promise<void> {
      guard("remove");
      things.delete(id);
    },
  };
}

function setup() {
  const server = fakeServer();
  let connection: AccountConnection | null = CONNECTION;
  const store = createStore<{ things: ThingsState }>()(() => ({ things: { ...emptyResource<Thing>(), total: 0 } }));
  const home = homeIn(store.setState, store.getState, "things", () => connection);
  const list = resourceList(home, {
    many: "things",
    async list() {
      const rows = await server.list();
      return { rows, total: rows.length };
    },
  });
  const documents = resourceDocuments(list, {
    one: "thing",
    read: (_c, id) => server.read(id),
    prepare: (thing) => (thing.name.trim() === "" ? "Give the thing a name." : { ...thing, name: thing.name.trim() }),
    save: (_c, thing) => server.save(thing),
    remove: (_c, id) => server.remove(id),
  });
  const state = () => store.getState().things;
  return { server, store, list, documents, state, signOut: () => (connection = null) };
}

describe("resource list: reading", () => {
  it("reads the rows and the list's own fields, loading meanwhile", async () => {
    const { list, state } = setup();
    const reading = list.load();
    expect(state().loading).toBe(true);
    expect(await reading).toBe(true);
    expect(state()).toMatchObject({ rows: [{ id: "t1", name: "One" }], total: 1, loading: false, error: null });
  });

  it("asks nothing when signed out", async () => {
    const { list, server, state, signOut } = setup();
    signOut();
    expect(await list.load()).toBe(false);
    expect(server.asked).toEqual([]);
    expect(state().loading).toBe(false);
  });

  it("lets only the newest answer land: a slow earlier read does not overwrite it", async () => {
    const { list, server, state } = setup();
    server.hold();
    const first = list.load();
    server.things.set("t2", { id: "t2", name: "Two" });
    expect(await list.load()).toBe(true);
    expect(state().rows.map((t) => t.id)).toEqual(["t1", "t2"]);
    server.held[0]?.resolve([{ id: "old", name: "Stale" }]);
    expect(await first).toBe(false);
    expect(state()).toMatchObject({ total: 2, loading: false });
    expect(state().rows.map((t) => t.id)).toEqual(["t1", "t2"]);
  });

  it("drops a slow earlier read's failure too, and keeps loading for the newer read", async () => {
    const { list, server, state } = setup();
    server.hold(2);
    const first = list.load();
    const second = list.load();
    server.held[0]?.reject(unreachable());
    expect(await first).toBe(false);
    expect(state()).toMatchObject({ loading: true, error: null });
    server.held[1]?.resolve([{ id: "t9", name: "Nine" }]);
    expect(await second).toBe(true);
    expect(state()).toMatchObject({ rows: [{ id: "t9" }], loading: false, error: null });
  });

  it("says why a read failed, keeps the rows it had, and clears the words when tried again", async () => {
    const { list, server, state } = setup();
    await list.load();
    server.refuse("list", unreachable());
    expect(await list.load()).toBe(false);
    expect(state()).toMatchObject({ loading: false, error: "The things could not be read: the server cannot be reached." });
    expect(state().rows.map((t) => t.id)).toEqual(["t1"]);
    server.heal("list");
    server.things.set("t2", { id: "t2", name: "Two" });
    expect(await list.load()).toBe(true);
    expect(state()).toMatchObject({ loading: false, error: null, total: 2 });
  });

  it("leaves what the list's own failure says when it has one", async () => {
    const server = fakeServer();
    const store = createStore<{ things: ThingsState }>()(() => ({ things: { ...emptyResource<Thing>(), total: 3 } }));
    const list = resourceList(homeIn(store.setState, store.getState, "things", () => CONNECTION), {
      many: "things",
      list: async () => ({ rows: await server.list() }),
      listFailed: (_error, words) => ({ rows: [], total: 0, error: `${words} (own)` }),
    });
    await list.load();
    server.refuse("list", httpError(500));
    await list.load();
    expect(store.getState().things).toMatchObject({ rows: [], total: 0, loading: false, error: "The things could not be read: the server answered 500. (own)" });
  });
});

describe("resource documents", () => {
  it("creates, then replaces, saying so and reading the list again each time", async () => {
    const { documents, server, state } = setup();
    expect(await documents.save({ id: "", name: " Two " })).toBeNull();
    expect(state().notice).toBe("Thing “Two” saved.");
    expect(state().rows.map((t) => t.name)).toEqual(["One", "Two"]);
    const read = await documents.read("t2");
    if (typeof read === "string") throw new Error(read);
    expect(await documents.save({ ...read, name: "Deux" })).toBeNull();
    expect(server.things.get("t2")?.name).toBe("Deux");
    expect(state().notice).toBe("Thing “Deux” saved.");
    expect(state().rows.map((t) => t.name)).toEqual(["One", "Deux"]);
    expect(server.asked.filter((a) => a === "list")).toHaveLength(2);
  });

  it("refuses a document it cannot send without asking the server", async () => {
    const { documents, server } = setup();
    expect(await documents.save({ id: "", name: "  " })).toBe("Give the thing a name.");
    expect(server.asked).toEqual([]);
  });

  it("deletes: the row leaves the list, pending while the server is asked, once", async () => {
    const { list, documents, server, state } = setup();
    await list.load();
    const removing = documents.remove("t1");
    expect(state().pending).toEqual(["t1"]);
    expect(await documents.remove("t1")).toBe(false);
    expect(await removing).toBe(true);
    expect(server.asked.filter((a) => a === "remove")).toHaveLength(1);
    expect(state()).toMatchObject({ rows: [], pending: [], notice: "Thing deleted." });
    expect(await documents.read("t1")).toBe("The thing could not be read: it no longer exists (someone may have deleted it).");
  });

  it("a refusal (403) is put in words and changes nothing", async () => {
    const { list, documents, server, state } = setup();
    await list.load();
    const before = state();
    server.refuse("save", httpError(403));
    server.refuse("remove", httpError(403));
    expect(await documents.save({ id: "t1", name: "Changed" })).toBe("The thing was not saved: only an admin may do this.");
    expect(state()).toBe(before);
    expect(await documents.remove("t1")).toBe(false);
    expect(state()).toMatchObject({ rows: before.rows, notice: null, pending: [], error: "The thing was not deleted: only an admin may do this." });
    expect(server.things.get("t1")?.name).toBe("One");
  });

  it("answers that the user is signed out", async () => {
    const { documents, server, signOut } = setup();
    signOut();
    expect(await documents.read("t1")).toBe("You are signed out.");
    expect(await documents.save({ id: "t1", name: "x" })).toBe("You are signed out.");
    expect(await documents.remove("t1")).toBe(false);
    expect(server.asked).toEqual([]);
  });
});

describe("resource list: a change", () => {
  it("is shown at once and put back when the server refuses, clearing the last outcome's words first", async () => {
    const { list, store, state } = setup();
    await list.load();
    store.setState({ things: { ...state(), notice: "Earlier." } });
    const answer = deferred<void>();
    const rename = (name: string) => list.home.patch({ rows: [{ id: "t1", name }] });
    const changing = list.change({ key: "t1", failure: "The name was not changed", show: () => rename("Shown"), work: () => answer.promise, undo: () => rename("One") });
    expect(state()).toMatchObject({ rows: [{ name: "Shown" }], pending: ["t1"], notice: null });
    answer.reject(httpError(409));
    expect(await changing).toBe(false);
    expect(state()).toMatchObject({
      rows: [{ name: "One" }],
      pending: [],
      error: "The name was not changed: someone changed it at the same time; reload and try again.",
    });
    expect(await list.change({ key: "t1", failure: "x", work: async () => rename("Kept") })).toBe(true);
    expect(state()).toMatchObject({ rows: [{ name: "Kept" }], pending: [], error: null });
  });

  it("is not undone by a read asked before it that answers after it was shown; the list is read again", async () => {
    const { list, server, state } = setup();
    await list.load();
    // A read on its way, answered by the server before the change (the row as it was).
    server.hold();
    const before = list.load();
    const answer = deferred<void>();
    const rename = (name: string) => list.home.patch({ rows: [{ id: "t1", name }] });
    const changing = list.change({
      key: "t1",
      failure: "The name was not changed",
      show: () => rename("Shown"),
      work: async () => {
        await answer.promise;
        server.things.set("t1", { id: "t1", name: "Shown" });
      },
      undo: () => rename("One"),
    });
    server.held[0]?.resolve([{ id: "t1", name: "One" }]);
    expect(await before).toBe(false);
    expect(state().rows).toEqual([{ id: "t1", name: "Shown" }]);
    answer.resolve();
    expect(await changing).toBe(true);
    await poll("the list read again", () => (state().loading ? undefined : true));
    expect(state().rows).toEqual([{ id: "t1", name: "Shown" }]);
    expect(server.asked.filter((what) => what === "list")).toHaveLength(3);
  });
});
