// Call-queue routing without media: 1,000 callers waiting, 200 recipients whose calls are answered
// and ended by an instant endpoint at the calls/ boundary (QueuedCall), so only the engine, its
// store writes and its events are measured. Figures: sessions routed per second, the delay from a
// recipient becoming Ready to their next offer (p50 / p99 / max), and CPU.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { startCallqHost } from "../server/callq-host/index.js";
import type { OfferOutcome, QueuedCall } from "../server/callq/ports.js";
import { Store } from "../server/store/index.js";
import { percentile, report } from "./report.js";

const SESSIONS = Number(process.env.BENCH_CALLQ_SESSIONS ?? 1000);
const RECIPIENTS = Number(process.env.BENCH_CALLQ_RECIPIENTS ?? 200);
const QUEUES = 4;
const ACCOUNT = "b".repeat(32);

/** Answers at once; the call lasts `talkMs` (0: ends on the next turn of the event loop). */
class InstantCall implements QueuedCall {
  readonly caller: { name: string; number: string };
  constructor(
    readonly callId: string,
    readonly talkMs: number,
  ) {
    this.caller = { name: `Caller ${callId}`, number: "+15550100" };
  }
  offer(): Promise<OfferOutcome> {
    const ended = new Promise<void>((resolve) => (this.talkMs === 0 ? setImmediate(resolve) : setTimeout(resolve, this.talkMs)));
    return Promise.resolve({ kind: "answered", ended });
  }
  onGone(): void {}
}

async function run(talkMs: number): Promise<[string, string][]> {
  const dir = await mkdtemp(join(tmpdir(), "sb-bench-callq-"));
  const store = await Store.open({ dir });
  const readyAt = new Map<string, number>();
  const delays: number[] = [];
  let routed = 0;
  let lastRouted = 0;
  const bus = {
    publish(e: { routing_key: string; name: string; data: Record<string, unknown> }): void {
      if (!e.routing_key.startsWith("callq.recipient.")) return;
      const id = String(e.data.recipient_id);
      if (e.name === "ready") readyAt.set(id, performance.now());
      else if (e.name === "offer") {
        const since = readyAt.get(id);
        if (since !== undefined) delays.push(performance.now() - since);
        readyAt.delete(id);
        routed += 1;
        lastRouted = performance.now();
      }
    },
  };
  const silent = (): void => undefined;
  const host = await startCallqHost({ store, bus, logger: { info: silent, warn: silent, error: silent } });
  const engine = host.engine;
  const users = await store.account(ACCOUNT, "users");
  const ids: string[] = [];
  for (let i = 0; i < RECIPIENTS; i += 1) ids.push((await users.create({ username: `agent${i}`, callq: { enabled: true } })).id);
  const queues = await store.account(ACCOUNT, "callq_queues");
  const queueIds: string[] = [];
  const routers = ["route_round_robin", "route_least_calls", "route_least_offers", "route_most_idle"];
  for (let q = 0; q < QUEUES; q += 1) {
    // Every recipient serves two of the four queues.
    const members = Object.fromEntries(ids.filter((_, i) => i % QUEUES === q || (i + 1) % QUEUES === q).map((id) => [id, ""]));
    queueIds.push((await queues.create({ name: `Q${q}`, queue_router: routers[q], members })).id);
  }
  await new Promise((r) => setTimeout(r, 50));
  // Everyone waits first; then the recipients log in Ready one after another.
  const done: Promise<unknown>[] = [];
  for (let s = 0; s < SESSIONS; s += 1) done.push(engine.join(ACCOUNT, queueIds[s % QUEUES] ?? "", new InstantCall(`call-${s}`, talkMs)));
  await new Promise((r) => setTimeout(r, 50));
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const id of ids) await engine.recipientAction(ACCOUNT, id, "login_ready");
  await Promise.all(done);
  const elapsed = lastRouted - started;
  const used = process.cpuUsage(cpu);
  await host.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
  return [
    [`talk ${talkMs} ms: sessions routed`, `${routed} in ${elapsed.toFixed(0)} ms = ${Math.round((routed / elapsed) * 1000)} sessions/s`],
    [`talk ${talkMs} ms: Ready -> offer`, `p50 ${percentile(delays, 50).toFixed(2)} ms, p99 ${percentile(delays, 99).toFixed(2)} ms, max ${Math.max(...delays).toFixed(2)} ms (${delays.length} offers)`],
    [`talk ${talkMs} ms: CPU`, `${((used.user + used.system) / 1000).toFixed(0)} ms over ${elapsed.toFixed(0)} ms (${(((used.user + used.system) / 1000 / elapsed) * 100).toFixed(0)}% of a core)`],
  ];
}

const rows = [...(await run(0)), ...(await run(20))];
report(`callq routing: ${SESSIONS} waiting sessions, ${RECIPIENTS} recipients, ${QUEUES} queues (one per router)`, rows);
