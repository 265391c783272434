// WebSocket upgrades on the main listener: /events and /sip take them (a subscription answered,
// a SIP REGISTER challenged); an upgrade to any other path is refused as it always was, whatever
// the path (a REST route, the /v2/ catch-all, a path of no route, the console's page) and the
// connection is closed by the server; the guard's refusals come first.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { credentials, DEMO_PASSWORD } from "../helpers/api.js";
import { EventsClient } from "../helpers/events-client.js";
import { restartableServer } from "../helpers/restartable-server.js";

const server = restartableServer("sb-ws-paths-");

/** What the server did with an upgrade: its status line, its body's error, and that it closed the connection. */
interface Upgrade {
  status: number;
  error: string | null;
  /** A WebSocket close frame's code after a 101 (1005: none given), else null. */
  closeCode: number | null;
}

/** A raw upgrade request; resolves once the server has closed the connection. */
function upgrade(path: string, headers: Record<string, string> = {}): Promise<Upgrade> {
  const url = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path,
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", ...headers },
    });
    req.on("error", reject);
    // Switched: read the frames (the first may come with the 101, in `head`) until the server
    // ends the connection, answering its close as a client does.
    req.on("upgrade", (res, socket, head: Buffer) => {
      const chunks: Buffer[] = [];
      const take = (c: Buffer): void => {
        chunks.push(c);
        if (((c[0] ?? 0) & 0x0f) === 8) socket.end(Buffer.from([0x88, 0x80, 0, 0, 0, 0]));
      };
      if (head.length > 0) take(head);
      socket.on("data", take);
      socket.on("close", () => {
        const frames = Buffer.concat(chunks);
        // A close frame (opcode 8): its code is in the payload's first two bytes, if any.
        const isClose = frames.length >= 2 && ((frames[0] ?? 0) & 0x0f) === 8;
        const code = isClose && ((frames[1] ?? 0) & 0x7f) >= 2 ? frames.readUInt16BE(2) : isClose ? 1005 : -1;
        resolve({ status: res.statusCode ?? 0, error: null, closeCode: code });
      });
    });
    // Not switched: the HTTP answer, then the connection must close.
    req.on("response", (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.socket.on("close", () => {
        const parsed = body.startsWith("{") ? (JSON.parse(body) as { message?: string }) : null;
        resolve({ status: res.statusCode ?? 0, error: parsed?.message ?? null, closeCode: null });
      });
    });
    req.end();
  });
}

async function login(): Promise<{ token: string; accountId: string }> {
  const res = await fetch(`${server.url}/v2/user_auth`, {
    method: "PUT",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ data: { credentials: credentials("admin", DEMO_PASSWORD), account_name: "demo" } }),
  });
  const body = (await res.json()) as { auth_token: string; data: { account_id: string } };
  return { token: body.auth_token, accountId: body.data.account_id };
}

describe("WebSocket upgrades", () => {
  it("are refused on every path but /events and /sip, the connection closed", async () => {
    await server.start();
    const { token, accountId } = await login();
    const device = (await (await fetch(`${server.url}/v2/accounts/${accountId}/devices?page_size=1`, { headers: { "X-Auth-Token": token } })).json()) as { data: { id: string }[] };
    const deviceId = device.data[0]?.id ?? "";
    const outcomes = {
      restRoute: await upgrade(`/v2/accounts/${accountId}/devices/${deviceId}`, { "X-Auth-Token": token }),
      restList: await upgrade(`/v2/accounts/${accountId}/devices`, { "X-Auth-Token": token }),
      restNoToken: await upgrade(`/v2/accounts/${accountId}/devices`),
      restDeadToken: await upgrade(`/v2/accounts/${accountId}/devices`, { "X-Auth-Token": "0".repeat(32) }),
      otherAccount: await upgrade(`/v2/accounts/${"f".repeat(32)}/devices`, { "X-Auth-Token": token }),
      catchAllNoEndpoint: await upgrade("/v2/nothing-here", { "X-Auth-Token": token }),
      noRoute: await upgrade("/nothing-here"),
      console: await upgrade("/"),
      eventsWithoutSocketHeaders: await upgrade("/events/more"),
      badHost: await upgrade("/events", { Host: "evil.example" }),
      badOrigin: await upgrade("/sip", { Origin: "http://evil.example", "Sec-WebSocket-Protocol": "sip" }),
      sipWithoutSubprotocol: await upgrade("/sip"),
      openapi: await upgrade("/v2/openapi.json"),
    };
    // A route that is not a WebSocket's switches and closes at once (no close code), once its own
    // refusals have passed (the token, the account); a path of no route, the guard and the
    // WebSocket routes' own refusals answer in HTTP; the console's page (not built here) answers
    // itself. Every connection is closed by the server.
    const switchedAndClosed: Upgrade = { status: 101, error: null, closeCode: 1005 };
    const http = (status: number, error: string | null): Upgrade => ({ status, error, closeCode: null });
    expect(outcomes).toEqual({
      restRoute: switchedAndClosed,
      restList: switchedAndClosed,
      restNoToken: switchedAndClosed,
      restDeadToken: http(401, "invalid_credentials"),
      otherAccount: http(403, "forbidden"),
      catchAllNoEndpoint: switchedAndClosed,
      noRoute: http(404, "not_found"),
      console: http(200, null),
      eventsWithoutSocketHeaders: http(404, "not_found"),
      badHost: http(421, "misdirected_request"),
      badOrigin: http(403, "forbidden"),
      sipWithoutSubprotocol: http(400, "validation error"),
      openapi: switchedAndClosed,
    });
  });

  it("open on /events and /sip and work there", async () => {
    await server.start();
    const { token, accountId } = await login();
    const events = await EventsClient.connect(`${server.url.replace("http", "ws")}/events`);
    const reply = await events.subscribe(accountId, "call.*.*", { auth_token: token });
    expect(reply.status).toBe("success");
    await events.close();

    const sip = new WebSocket(`${server.url.replace("http", "ws")}/sip`, "sip");
    const answer = await new Promise<string>((resolve, reject) => {
      sip.on("error", reject);
      sip.on("message", (data) => resolve(data.toString()));
      sip.on("open", () =>
        sip.send(
          [
            "REGISTER sip:127.0.0.1 SIP/2.0",
            "Via: SIP/2.0/WS ws.invalid;branch=z9hG4bK-paths-1",
            "Max-Forwards: 70",
            "From: <sip:nobody@127.0.0.1>;tag=1",
            "To: <sip:nobody@127.0.0.1>",
            "Call-ID: ws-paths-1",
            "CSeq: 1 REGISTER",
            "Contact: <sip:nobody@ws.invalid;transport=ws>",
            "Content-Length: 0",
            "",
            "",
          ].join("\r\n"),
        ),
      );
    });
    expect(answer).toMatch(/^SIP\/2\.0 (401|403|404) /);
    sip.close();
  });
});
