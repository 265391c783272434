// The engine's events: one per step, on the routing keys callq.queue.<id>, callq.recipient.<id>
// and callq.session.<id>, each carrying what a listener needs without asking the API again; and
// callq.clock.<account_id> when the account's queue time stops, goes on or is the server's again.
import type { CallqEventSink, CallqLogger } from "./ports.js";
import type { Queue } from "./queue.js";
import type { Recipient } from "./recipient.js";
import type { Step } from "./recipient-state.js";
import type { Session } from "./session.js";
import type { SessionEventName, SessionState } from "./session-state.js";
import { recipientData, sessionRow, wrapupSecondsLeft } from "./views.js";

type Detail = Record<string, unknown>;

export class CallqPublisher {
  constructor(
    private readonly bus: CallqEventSink,
    private readonly logger: CallqLogger,
    /** Unix ms of the account's queue time, for the wrap-up left. */
    private readonly now: (accountId: string) => number,
  ) {}

  /** A publisher that fails is logged: the engine's step stands. */
  publish(accountId: string, kind: "queue" | "recipient" | "session" | "alert" | "clock", id: string, name: string, data: Detail): void {
    try {
      this.bus.publish({ account_id: accountId, routing_key: `callq.${kind}.${id}`, name, data: { account_id: accountId, ...data } });
    } catch (err) {
      this.logger.warn({ err, routing_key: `callq.${kind}.${id}` }, "callq: publishing an event failed");
    }
  }

  /** A recipient's step, with the call offered or delivered and the wrap-up it starts. */
  recipient(accountId: string, r: Recipient, taken: Step, detail?: Detail): void {
    const call = taken.event === "offer" ? r.offered : taken.event === "delivered" ? r.handling : undefined;
    this.publish(accountId, "recipient", r.id, taken.event, {
      ...recipientData(r),
      previous_state: taken.from,
      ...(call ? { ...call } : {}),
      ...(taken.to === "Wrapup-Time" ? { wrapup_time_seconds: wrapupSecondsLeft(r, this.now(accountId)) } : {}),
      ...detail,
    });
  }

  session(accountId: string, queue: Queue, session: Session, taken: { from: SessionState; event: SessionEventName }, detail?: Detail): void {
    this.publish(accountId, "session", session.id, taken.event, { ...sessionRow(session), queue_name: queue.config.name, previous_state: taken.from, ...detail });
  }

  /** What happened to a caller in a queue, with their wait once they stopped waiting. */
  queue(accountId: string, queue: Queue, name: string, session: Session, detail?: Detail): void {
    const wait = session.leftWaitingAt === undefined ? undefined : Math.round((session.leftWaitingAt - session.enteredAt) / 100) / 10;
    this.publish(accountId, "queue", queue.id, name, {
      ...sessionRow(session),
      queue_name: queue.config.name,
      ...(wait === undefined ? {} : { wait_time: wait }),
      ...detail,
    });
  }
}
