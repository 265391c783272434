// The wallboards slice: the account's wall screens for supervisors and admins, making one (whose
// full address, key included, is shown once, to copy to the screen) and deleting one. Built on
// state/resource.ts like the admin lists.
import type { StateCreator } from "zustand/vanilla";
import { httpWallboardsApi, type WallboardRow, type WallboardsApi } from "../api/wallboards.js";
import { connectionOf } from "./account-connection.js";
import { emptyResource, homeIn, resourceList, type ResourceState } from "./resource.js";
import type { AppState } from "./store.js";

export interface WallboardsState extends ResourceState<WallboardRow> {
  /** The board just made, with the address that opens it; its key is never shown again. */
  made: { id: string; name: string; address: string } | null;
}

export interface WallboardsSlice {
  wallboards: WallboardsState;
  loadWallboards(): Promise<void>;
  /** Makes a board of `queueIds` (every queue when empty); resolves whether the server took it. */
  makeWallboard(name: string, queueIds: string[]): Promise<boolean>;
  deleteWallboard(id: string): Promise<boolean>;
}

export function createWallboardsSlice(deps: { wallboardsApi?: WallboardsApi }): StateCreator<AppState, [], [], WallboardsSlice> {
  const api = deps.wallboardsApi ?? httpWallboardsApi;
  return (set, get) => {
    const home = homeIn(set, get, "wallboards", () => connectionOf(get()));
    const list = resourceList<WallboardsState>(home, {
      many: "wallboards",
      list: async (connection) => ({ rows: await api.list(connection) }),
    });
    return {
      wallboards: { ...emptyResource<WallboardRow>(), made: null },

      async loadWallboards() {
        await list.load();
      },

      async makeWallboard(name, queueIds) {
        const trimmed = name.trim();
        if (trimmed === "") {
          home.patch({ error: "Name the wallboard first." });
          return false;
        }
        return list.change({
          failure: "The wallboard was not made",
          work: async (connection) => {
            const made = await api.create(connection, { name: trimmed, ...(queueIds.length > 0 ? { queue_ids: queueIds } : {}) });
            const { key: _key, page, ...row } = made;
            home.patch({
              rows: [...home.get().rows, row],
              made: { id: made.id, name: made.name, address: `${connection.serverUrl}${page}` },
              notice: `Wallboard “${made.name}” made.`,
            });
          },
        });
      },

      deleteWallboard(id) {
        return list.change({
          key: id,
          failure: "The wallboard was not deleted",
          work: async (connection) => {
            await api.remove(connection, id);
            const made = home.get().made;
            home.patch({ rows: home.get().rows.filter((row) => row.id !== id), made: made?.id === id ? null : made, notice: "Wallboard deleted: its screen goes blank." });
          },
        });
      },
    };
  };
}
