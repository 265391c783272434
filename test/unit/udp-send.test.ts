// A direct path's sends skip dgram's dns lookup for the far end's address (server/media/udp-send.ts):
// the datagram reaches the kernel before `send` returns. Seen here without any timing: a socket
// closed right after `send`, in the same turn, has sent it (with dgram's lookup the send proper
// waits a next tick, finds the socket closed and drops it). Other addresses and names still go
// through dgram's lookup, errors still reach the send's callback, and the socket stays
// unconnected: datagrams from any address still arrive (a far end that moves, ICE's checks).
import { createSocket, type Socket } from "node:dgram";
import { afterEach, describe, expect, it } from "vitest";
import { sendWithoutLookup } from "../../server/media/udp-send.js";

const sockets: Socket[] = [];
afterEach(() => {
  for (const socket of sockets.splice(0)) {
    try {
      socket.close();
    } catch {
      // already closed by the test
    }
  }
});

function bound(address = "127.0.0.1"): Promise<Socket> {
  return new Promise((resolve) => {
    const socket = createSocket("udp4");
    sockets.push(socket);
    socket.bind(0, address, () => resolve(socket));
  });
}

/** The datagrams a socket receives, as text, with the port each came from. */
function inbox(socket: Socket): { texts: string[]; from: number[] } {
  const box = { texts: [] as string[], from: [] as number[] };
  socket.on("message", (data, rinfo) => {
    box.texts.push(data.toString());
    box.from.push(rinfo.port);
  });
  return box;
}

async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = performance.now() + 5_000;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("sendWithoutLookup", () => {
  it("hands a send to the shortcut's address to the kernel before send returns", async () => {
    const [sender, receiver] = [await bound(), await bound()];
    const box = inbox(receiver);
    expect(sendWithoutLookup(sender, "127.0.0.1")).toBe(true);
    sender.send(Buffer.from("first"), receiver.address().port, "127.0.0.1");
    // Closed in the same turn: a send still waiting for its lookup would be dropped.
    sender.close();
    await until(() => box.texts.length === 1, "the datagram sent before the close");
    expect(box.texts).toEqual(["first"]);
  });

  it("moves to a new address when called again; other addresses and names take dgram's lookup", async () => {
    const sender = await bound();
    const [here, there] = [await bound("127.0.0.1"), await bound("127.0.0.2")];
    const [atHere, atThere] = [inbox(here), inbox(there)];
    expect(sendWithoutLookup(sender, "127.0.0.1")).toBe(true);
    // Another address and a name: looked up by dgram (a tick later), delivered all the same.
    sender.send(Buffer.from("to .2 looked up"), there.address().port, "127.0.0.2");
    sender.send(Buffer.from("to localhost looked up"), here.address().port, "localhost");
    await until(() => atThere.texts.length === 1 && atHere.texts.length === 1, "the looked-up datagrams");
    // The path moved to another address (a new pair): that one goes out at once now.
    expect(sendWithoutLookup(sender, "127.0.0.2")).toBe(true);
    sender.send(Buffer.from("to .2 at once"), there.address().port, "127.0.0.2");
    sender.close();
    await until(() => atThere.texts.length === 2, "the datagram to the new address");
    expect(atThere.texts).toEqual(["to .2 looked up", "to .2 at once"]);
    expect(atHere.texts).toEqual(["to localhost looked up"]);
  });

  it("passes a send's error to its callback", async () => {
    const [sender, receiver] = [await bound(), await bound()];
    sendWithoutLookup(sender, "127.0.0.1");
    const error = await new Promise<Error | null>((resolve) => sender.send(Buffer.alloc(70_000), receiver.address().port, "127.0.0.1", resolve));
    expect(error).toBeInstanceOf(Error);
    expect((error as NodeJS.ErrnoException).code).toBe("EMSGSIZE");
  });

  it("leaves the socket unconnected: a far end that moves to a new port is still heard and answered", async () => {
    const [server, far] = [await bound(), await bound()];
    const [atServer, atFar] = [inbox(server), inbox(far)];
    sendWithoutLookup(server, "127.0.0.1");
    server.send(Buffer.from("hello"), far.address().port, "127.0.0.1");
    await until(() => atFar.texts.length === 1, "the first datagram");
    // The far end comes back from another port (a NAT rebinding, a new candidate).
    const moved = await bound();
    const atMoved = inbox(moved);
    moved.send(Buffer.from("from a new port"), server.address().port, "127.0.0.1");
    await until(() => atServer.texts.length === 1, "the moved far end's datagram");
    expect(atServer.from).toEqual([moved.address().port]);
    server.send(Buffer.from("answer"), moved.address().port, "127.0.0.1");
    await until(() => atMoved.texts.length === 1, "the answer at the new port");
    expect(atMoved.texts).toEqual(["answer"]);
  });

  it("refuses what it cannot answer: a name, another family's address", async () => {
    const sender = await bound();
    expect(sendWithoutLookup(sender, "localhost")).toBe(false);
    expect(sendWithoutLookup(sender, "::1")).toBe(false);
  });
});
