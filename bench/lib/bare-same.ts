// What bench/lib/bare-fastify.ts needs to do the same work as a Switchboard answer: the token to
// check and the headers Switchboard sent (all but those Fastify and Node make themselves, the
// request id and the ETag, which the reference makes per request and per body).
import { writeFile } from "node:fs/promises";
import { join } from "node:path";

const MADE_PER_ANSWER = new Set(["date", "connection", "keep-alive", "content-length", "content-type", "transfer-encoding", "x-request-id", "etag"]);

/** The reference's extra argument (a file in `dir`), or none with BENCH_BARE_PLAIN=1. */
export async function sameWorkFile(dir: string, token: string, headers: Headers): Promise<string[]> {
  if (process.env.BENCH_BARE_PLAIN === "1") return [];
  const same: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (!MADE_PER_ANSWER.has(name)) same[name] = value;
  });
  const file = join(dir, "bare-same.json");
  await writeFile(file, JSON.stringify({ token, headers: same }));
  return [file];
}
