// The root guard keeps its verdicts on the Host values it has seen (server/http/guard.ts): a
// verdict never outlives a change of the listening port, a forged Host stays refused however
// many others came between, and names keep their case rules. Real Fastify, requests injected.
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { registerGuard } from "../../server/http/guard.js";

async function guarded(port: () => number) {
  const app = Fastify({ logger: false });
  registerGuard(app, { hosts: ["pbx.example"], allowOrigins: [], port });
  app.get("/", async () => "ok");
  await app.ready();
  return app;
}

describe("the guard's Host verdicts", () => {
  it("follow the port: a Host allowed on one port is refused once the server listens on another, and back", async () => {
    let port = 4000;
    const app = await guarded(() => port);
    const status = async (host: string) => (await app.inject({ method: "GET", url: "/", headers: { host } })).statusCode;
    expect(await status("127.0.0.1:4000")).toBe(200);
    port = 4001;
    expect(await status("127.0.0.1:4000")).toBe(421);
    expect(await status("127.0.0.1:4001")).toBe(200);
    port = 4000;
    expect(await status("127.0.0.1:4000")).toBe(200);
    expect(await status("127.0.0.1:4001")).toBe(421);
    await app.close();
  });

  it("stay as strict after many different Hosts: forged ones refused, ours answered, case ignored as before", async () => {
    const app = await guarded(() => 80);
    const status = async (host: string) => (await app.inject({ method: "GET", url: "/", headers: { host } })).statusCode;
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 150; i++) expect(await status(`evil${i}.example`)).toBe(421);
      expect(await status("localhost")).toBe(200);
      expect(await status("LOCALHOST")).toBe(200);
      expect(await status("PBX.example:80")).toBe(200);
      expect(await status("pbx.example:81")).toBe(421);
      expect(await status("evil3.example")).toBe(421);
      expect(await status("localhost.evil.example")).toBe(421);
    }
    await app.close();
  });
});
