// A UDP socket's sends to a known address without dgram's per-datagram lookup. An unconnected
// `dgram` socket looks up every destination through `dns.lookup`, even an address literal: an `isIP`
// regular expression, then a `process.nextTick` to the send proper (with a closure and its async
// scope), so each datagram goes out a turn of the event loop after `send` returns. At 100 sends a
// second per leg that was ~5% of a media worker's CPU (docs/design-notes.md, session 26).
//
// A connected socket (`socket.connect`) would skip the lookup too, but the kernel then drops every
// datagram from any other address: a far end whose address changes (a NAT rebinding, its checks on
// a new pair), an ICE restart's checks, werift's own sends elsewhere (a connected socket refuses a
// send with an address). So the socket stays unconnected and only the lookup is answered here, at
// once, for the one address the direct path sends to; any other goes through dgram's own lookup.
//
// The lookup is the socket's internal handle's (`lookup4`/`lookup6` bound per socket, Node 12 and
// up), reached through the socket's "state symbol". A Node without it keeps its own lookup.

import { isIP } from "node:net";
import type { Socket } from "node:dgram";

type LookupCallback = (error: Error | null, address?: string, family?: number) => void;
type Lookup = (address: string, callback: LookupCallback) => void;

interface Handle {
  lookup: Lookup;
}

/** One per socket: the address answered at once, and dgram's own lookup for the rest. */
interface Shortcut {
  address: string;
  family: number;
}

const shortcuts = new WeakMap<Socket, Shortcut>();

function handleOf(socket: Socket): Handle | undefined {
  const state = Object.getOwnPropertySymbols(socket).find((s) => s.description === "state symbol");
  if (state === undefined) return undefined;
  const handle = (socket as unknown as Record<symbol, { handle?: unknown } | undefined>)[state]?.handle;
  if (typeof handle !== "object" || handle === null || typeof (handle as { lookup?: unknown }).lookup !== "function") return undefined;
  return handle as Handle;
}

/**
 * Sends from `socket` to the address literal `address` (any port) skip dgram's lookup from now on:
 * each goes to the kernel before `send` returns. Sends to other addresses, and names, still go
 * through dgram's lookup; a later call moves the shortcut to another address (a path on a new pair).
 * False when the socket has no lookup of its own to answer (another Node; closed) or `address` is
 * not a literal of the socket's family: nothing changes.
 */
export function sendWithoutLookup(socket: Socket, address: string): boolean {
  const family = isIP(address);
  // An address of the socket's own family only (dgram's lookup would refuse the other).
  if (family !== ((socket as unknown as { type?: string }).type === "udp6" ? 6 : 4)) return false;
  const known = shortcuts.get(socket);
  if (known) {
    known.address = address;
    known.family = family;
    return true;
  }
  const handle = handleOf(socket);
  if (!handle) return false;
  const shortcut: Shortcut = { address, family };
  const lookup = handle.lookup;
  handle.lookup = function (this: Handle, to: string, callback: LookupCallback): void {
    if (to === shortcut.address) callback(null, to, shortcut.family);
    else lookup.call(this, to, callback);
  };
  shortcuts.set(socket, shortcut);
  return true;
}
