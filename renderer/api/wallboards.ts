// The account's wallboards (a local addition of this server): the list, making one (its key comes
// back once, inside the page address), deleting one.
import { accountList, accountRequest, type AccountConnection } from "./account.js";

export interface WallboardRow {
  id: string;
  name: string;
  /** The queues shown; absent: every queue of the account. */
  queue_ids?: string[];
  /** Gregorian seconds. */
  expires: number;
  created_by: string | null;
}

export interface MadeWallboard extends WallboardRow {
  key: string;
  /** The page's path with the key in its fragment: what a wall screen opens. */
  page: string;
}

export interface NewWallboard {
  name: string;
  queue_ids?: string[];
  expires_in_days?: number;
}

export interface WallboardsApi {
  list(connection: AccountConnection): Promise<WallboardRow[]>;
  create(connection: AccountConnection, board: NewWallboard): Promise<MadeWallboard>;
  remove(connection: AccountConnection, id: string): Promise<void>;
}

export const httpWallboardsApi: WallboardsApi = {
  list: (connection) => accountList<WallboardRow>(connection, "/wallboards"),
  async create(connection, board) {
    return (await accountRequest<MadeWallboard>(connection, "PUT", "/wallboards", board)).data;
  },
  async remove(connection, id) {
    await accountRequest(connection, "DELETE", `/wallboards/${encodeURIComponent(id)}`);
  },
};
