// Item 12: 8 sockets sending malformed SIP and junk as fast as they can. Each is held to its own
// budget and, as it keeps on, closed with 1008 "SIP message rate exceeded"; meanwhile a registered
// phone's OPTIONS and REGISTER refreshes on its own socket are all answered. Then the cap on open
// SIP connections: the one past it is refused 429 in the API's error envelope.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { SipPhone } from "../helpers/sip-client.js";
import { floodGarbage, probeOptions } from "../helpers/sip-flood.js";
import { REALM, serveSip, type ServedSip } from "./sip-served.js";

const ABUSERS = 8;
const PER_ABUSER = 1500;
const MAX_SIP_SOCKETS = 256;

let sip: ServedSip;

beforeAll(async () => {
  sip = await serveSip();
}, 30_000);
afterAll(async () => {
  await sip?.stop();
});

interface Abuser {
  answers: number;
  closed: Promise<{ code: number; reason: string }>;
}

async function abuse(url: string): Promise<Abuser> {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/sip`, ["sip"]);
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const abuser: Abuser = {
    answers: 0,
    closed: new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString("utf8") }))),
  };
  ws.on("message", () => abuser.answers++);
  void (async () => {
    for (let i = 0; i < PER_ABUSER && ws.readyState === ws.OPEN; i++) {
      ws.send(floodGarbage(REALM, i));
      // Let the socket write now and then, as a script looping on send() does.
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
  })();
  return abuser;
}

describe("a flood of malformed SIP from 8 sockets", () => {
  it("closes each abusive socket with 1008 while a registered phone's requests are all answered", async () => {
    const device = await sip.device();
    const phone: SipPhone = await sip.phone(device);
    expect((await phone.register({ expires: 300 })).status).toBe(200);

    const abusers = await Promise.all(Array.from({ length: ABUSERS }, () => abuse(sip.url)));
    let flooding = true;
    const ended = Promise.all(abusers.map((a) => a.closed)).finally(() => (flooding = false));

    let answered = 0;
    for (let i = 0; (flooding || i < 10) && i < 2000; i++) {
      if (i % 10 === 9) {
        expect((await phone.register({ expires: 300 })).status).toBe(200);
      } else {
        phone.socket.send(probeOptions(REALM, 1000 + i));
        expect((await phone.socket.next(10_000)).status).toBe(200);
      }
      answered++;
      // A phone's pace: its socket has a budget like any other.
      await new Promise((r) => setTimeout(r, 100));
    }
    const closes = await ended;
    for (const close of closes) expect(close).toEqual({ code: 1008, reason: "SIP message rate exceeded" });
    // Throttled: far fewer 400s came back than messages went out.
    for (const a of abusers) expect(a.answers).toBeLessThan(PER_ABUSER / 4);
    expect(answered).toBeGreaterThanOrEqual(10);

    // A flooder back at once gets a few tokens, not a fresh burst: of 20 malformed requests sent
    // at once on a new socket (400 each, when read), 5 at most are read (a full burst: 8 to 20).
    const back = await sip.socket();
    for (let i = 0; i < 20; i++) back.send(floodGarbage(REALM, 4 * i));
    let got = 0;
    while (await back.next(1000).then(() => true, () => false)) got++;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThanOrEqual(5);
    await back.close();

    // The phone is still registered, a new one registers, and HTTP still answers.
    expect(await sip.registered()).toContain(device.id);
    const next = await sip.phone(await sip.device());
    expect((await next.register({ expires: 300 })).status).toBe(200);
  });
});

describe("open SIP connections", () => {
  it(`are capped at ${MAX_SIP_SOCKETS}: the next upgrade gets 429 in the error envelope; past their grace, the idlest socket with nothing registered makes room, never a registered phone`, async () => {
    const wsUrl = `${sip.url.replace(/^http/, "ws")}/sip`;
    const phone = await sip.phone(await sip.device());
    expect((await phone.register({ expires: 300 })).status).toBe(200);

    const open: { ws: WebSocket; closed: Promise<{ code: number; reason: string }> }[] = [];
    const connect = () =>
      new Promise<{ status: number; body: string } | null>((resolve, reject) => {
        const ws = new WebSocket(wsUrl, ["sip"]);
        ws.once("open", () => {
          open.push({ ws, closed: new Promise((done) => ws.once("close", (code, reason) => done({ code, reason: reason.toString("utf8") }))) });
          resolve(null);
        });
        ws.once("unexpected-response", (_req, res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString("utf8")));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        });
        ws.once("error", reject);
      });
    try {
      // Quickly, so that every socket is still within its grace when the cap is reached.
      for (let i = 0; i < 8; i++) await Promise.all(Array.from({ length: 30 }, connect));
      let refused: { status: number; body: string } | null = null;
      while (refused === null && open.length <= MAX_SIP_SOCKETS) refused = await connect();
      expect(refused?.status).toBe(429);
      expect(JSON.parse(refused?.body ?? "{}")).toMatchObject({ status: "error", error: "429", message: "too_many_requests" });
      expect(open.length).toBeLessThanOrEqual(MAX_SIP_SOCKETS);

      // Past the grace, the socket heard from least recently (and holding nothing) gives way.
      const quiet = open.length;
      for (const { ws } of open.slice(1)) ws.send("\r\n\r\n");
      await new Promise((r) => setTimeout(r, 5500));
      expect(await connect()).toBeNull();
      expect(await open[0]?.closed).toEqual({ code: 1013, reason: "Too many SIP connections; nothing was registered over this one" });
      expect(open.length).toBe(quiet + 1);

      // The registered phone kept its socket and its registration.
      expect(phone.socket.closed).toBe(false);
      expect((await phone.register({ expires: 300 })).status).toBe(200);
    } finally {
      await Promise.all(
        open.map(({ ws, closed }) => {
          ws.close();
          return closed;
        }),
      );
    }
  });
});
