// The live channels of every account: found by call id, by account, by the user who owns the
// device and by the device. A channel leaves the registry the moment it hangs up.
import { EventEmitter } from "node:events";
import type { Channel } from "./channel.js";

interface ChannelsEvents {
  added: [Channel];
  /** After its CHANNEL_DESTROY: the channel is over. */
  removed: [Channel];
}

export class Channels extends EventEmitter<ChannelsEvents> {
  readonly #byId = new Map<string, Channel>();

  get size(): number {
    return this.#byId.size;
  }

  add(channel: Channel): void {
    if (channel.state === "hungup") return;
    if (this.#byId.has(channel.id)) throw new Error(`a channel with call id ${channel.id} is already live`);
    this.#byId.set(channel.id, channel);
    channel.on("state", (change) => {
      if (change.to !== "hungup") return;
      this.#byId.delete(channel.id);
      this.emit("removed", channel);
    });
    this.emit("added", channel);
  }

  get(id: string): Channel | undefined {
    return this.#byId.get(id);
  }

  /** A live channel of this account, or undefined (another account's call is not there). */
  inAccount(accountId: string, id: string): Channel | undefined {
    const channel = this.#byId.get(id);
    return channel?.accountId === accountId ? channel : undefined;
  }

  all(): Channel[] {
    return [...this.#byId.values()];
  }

  ofAccount(accountId: string): Channel[] {
    return this.all().filter((c) => c.accountId === accountId);
  }

  /** Legs whose device belongs to the user: calls they make and calls ringing them. */
  ofUser(accountId: string, userId: string): Channel[] {
    return this.ofAccount(accountId).filter((c) => c.identity.ownerId === userId);
  }

  ofDevice(accountId: string, deviceId: string): Channel[] {
    return this.ofAccount(accountId).filter((c) => c.identity.deviceId === deviceId);
  }
}
