// Supervision: a supervisor's phones ring and, once one answers, that leg joins the target agent's
// call as a monitor of the bridge's mixer (eavesdrop, whisper to the agent, or barge in). Asking
// again with a new mode changes it on the live call; the recipient status follows (setWiretap).
import type { CallEngine, Channel } from "../calls/index.js";
import type { Bridge } from "../calls/bridge.js";
import type { CallContext } from "../calls/context.js";
import { dial, type DialTarget } from "../calls/dial.js";
import { userParty } from "../calls/identity.js";
import { userTargets } from "../calls/targets.js";
import type { CallqEngine } from "../callq/engine.js";
import type { MonitorMode } from "../monitor-mode.js";

/** How long the supervisor's phones ring. */
export const MONITOR_RING_TIMEOUT_MS = 30_000;

export interface MonitorRequest {
  calls: CallEngine;
  callq: Pick<CallqEngine, "setWiretap">;
  accountId: string;
  /** The supervisor (a user id): their devices ring. */
  supervisorId: string;
  /** The recipient (user id) whose call is monitored. */
  target: string;
  mode: MonitorMode;
}

export type MonitorErrorCode =
  /** The supervisor is no user of the account. */
  | "no_supervisor"
  /** A supervisor cannot monitor themselves. */
  | "self"
  /** The target is on no call that can be monitored. */
  | "no_call"
  /** The supervisor has no enabled device, or none of them is registered. */
  | "no_device";

export class MonitorError extends Error {
  override name = "MonitorError";
  constructor(
    readonly code: MonitorErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type MonitorState = "ringing" | "monitoring" | "ended";

/** One supervisor's supervision of one call. */
export interface Monitor {
  readonly supervisorId: string;
  readonly target: string;
  readonly mode: MonitorMode;
  readonly state: MonitorState;
  /** The supervisor's leg once answered. */
  readonly channel: Channel | undefined;
  /** True once the supervisor answered and listens in; false when it ended before that. */
  readonly connected: Promise<boolean>;
  /** Settles when the supervision is over (the supervisor hung up, or the call ended). */
  readonly ended: Promise<void>;
  /** Hangs the supervisor's leg up (or stops its ringing). */
  stop(): void;
}

/** The live supervisions per call engine, by `<account>/<supervisor>`. */
const live = new WeakMap<CallEngine, Map<string, Supervision>>();

/**
 * Starts supervising `target`'s call, or changes the mode of a supervision the supervisor already
 * has of that target (a new target ends the old one first). Resolves once the supervisor's phones
 * ring; throws MonitorError when that cannot happen.
 */
export async function startMonitor(request: MonitorRequest): Promise<Monitor> {
  const { calls, accountId, supervisorId, target, mode } = request;
  let sessions = live.get(calls);
  if (!sessions) {
    sessions = new Map();
    live.set(calls, sessions);
  }
  const key = `${accountId}/${supervisorId}`;
  const current = sessions.get(key);
  if (current && current.state !== "ended") {
    if (current.target === target) {
      current.setMode(mode);
      return current;
    }
    current.stop();
  }
  if (supervisorId === target) throw new MonitorError("self", "a supervisor cannot monitor their own calls");
  const ctx = calls.context;
  const supervisor = await userTargets(ctx.store, accountId, supervisorId);
  if (!supervisor) throw new MonitorError("no_supervisor", `no user ${supervisorId} in this account`);
  if (supervisor.targets.length === 0) throw new MonitorError("no_device", "the supervisor has no enabled device to ring");
  const call = targetCall(ctx, accountId, target);
  if (!call) throw new MonitorError("no_call", `recipient ${target} is on no call`);
  const targetUser = (await ctx.store.account(accountId, "users")).get(target);
  const supervision = new Supervision(request, call.agent, targetUser ? userParty(targetUser) : call.agent.self);
  sessions.set(key, supervision);
  void supervision.ended.then(() => {
    if (sessions.get(key) === supervision) sessions.delete(key);
  });
  await supervision.ring(supervisor.targets);
  return supervision;
}

/** The supervision a supervisor has now, if any. */
export function monitorOf(calls: CallEngine, accountId: string, supervisorId: string): Monitor | undefined {
  const found = live.get(calls)?.get(`${accountId}/${supervisorId}`);
  return found && found.state !== "ended" ? found : undefined;
}

/** The target's leg in a live bridge: the bridged channel whose device the target owns. */
function targetCall(ctx: CallContext, accountId: string, target: string): { agent: Channel; bridge: Bridge } | undefined {
  for (const agent of ctx.channels.ofUser(accountId, target)) {
    const bridge = agent.bridged ? ctx.bridgeOf(agent) : undefined;
    if (bridge) return { agent, bridge };
  }
  return undefined;
}

class Supervision implements Monitor {
  readonly supervisorId: string;
  readonly target: string;
  readonly connected: Promise<boolean>;
  readonly ended: Promise<void>;
  readonly #request: MonitorRequest;
  readonly #ctx: CallContext;
  readonly #agent: Channel;
  readonly #shownAs: { name: string; number: string };
  readonly #ringing = new AbortController();
  #mode: MonitorMode;
  #state: MonitorState = "ringing";
  #channel: Channel | undefined;
  #bridge: Bridge | undefined;
  #connected: (value: boolean) => void = () => undefined;
  #ended: () => void = () => undefined;

  constructor(request: MonitorRequest, agent: Channel, shownAs: { name: string; number: string }) {
    this.#request = request;
    this.#ctx = request.calls.context;
    this.supervisorId = request.supervisorId;
    this.target = request.target;
    this.#mode = request.mode;
    this.#agent = agent;
    this.#shownAs = shownAs;
    this.connected = new Promise((resolve) => (this.#connected = resolve));
    this.ended = new Promise((resolve) => (this.#ended = resolve));
  }

  get mode(): MonitorMode {
    return this.#mode;
  }

  get state(): MonitorState {
    return this.#state;
  }

  get channel(): Channel | undefined {
    return this.#channel;
  }

  /** Rings the supervisor; resolves once a leg is out, throws when none could be. */
  async ring(targets: readonly DialTarget[]): Promise<void> {
    const ctx = this.#ctx;
    const { accountId, supervisorId } = this.#request;
    // The agent's call ending while the supervisor's phone rings ends the ringing.
    const onAgent = () => {
      if (this.#agent.over) this.stop();
    };
    this.#agent.on("state", onAgent);
    void this.ended.then(() => this.#agent.off("state", onAgent));
    let firstLeg: (value: true) => void = () => undefined;
    const legOut = new Promise<true>((resolve) => (firstLeg = resolve));
    const onAdded = (channel: Channel) => {
      if (channel.originId === this.#agent.id && channel.identity.ownerId === supervisorId) firstLeg(true);
    };
    ctx.channels.on("added", onAdded);
    const dialled = dial(ctx, {
      accountId,
      realm: this.#agent.identity.realm,
      targets,
      caller: { name: `Monitor: ${this.#shownAs.name}`, number: this.#shownAs.number },
      timeoutMs: MONITOR_RING_TIMEOUT_MS,
      signal: this.#ringing.signal,
      origin: this.#agent,
    });
    void dialled.then(
      (result) => (result.kind === "answered" ? this.#answered(result.channel) : this.#finish()),
      (err: unknown) => {
        ctx.onError(err, "ringing a supervisor");
        this.#finish();
      },
    );
    try {
      const first = await Promise.race([legOut, dialled]);
      if (first !== true && first.kind === "failed" && first.cause === "SUBSCRIBER_ABSENT") {
        throw new MonitorError("no_device", "none of the supervisor's devices is registered");
      }
    } finally {
      ctx.channels.off("added", onAdded);
    }
  }

  setMode(mode: MonitorMode): void {
    if (this.#state === "ended" || mode === this.#mode) return;
    this.#mode = mode;
    if (this.#state !== "monitoring" || !this.#channel || !this.#bridge) return;
    this.#bridge.setMonitorMode(this.#channel, mode);
    this.#request.callq.setWiretap(this.#request.accountId, this.supervisorId, { target: this.target, mode, callId: this.#agent.id });
  }

  stop(): void {
    if (this.#state === "ended") return;
    this.#ringing.abort();
    if (this.#channel) this.#channel.hangup("NORMAL_CLEARING");
    else this.#finish();
  }

  #answered(channel: Channel): void {
    this.#channel = channel;
    const bridge = this.#agent.bridged ? this.#ctx.bridgeOf(this.#agent) : undefined;
    if (this.#state === "ended" || !bridge || channel.state !== "answered") {
      channel.hangup("NORMAL_CLEARING");
      this.#finish();
      return;
    }
    try {
      bridge.addMonitor(channel, this.#mode, this.#agent);
    } catch (err) {
      this.#ctx.onError(err, "joining a supervisor to a call");
      channel.hangup("NORMAL_TEMPORARY_FAILURE");
      this.#finish();
      return;
    }
    this.#bridge = bridge;
    this.#state = "monitoring";
    const { accountId } = this.#request;
    this.#request.callq.setWiretap(accountId, this.supervisorId, { target: this.target, mode: this.#mode, callId: this.#agent.id });
    channel.on("state", (change) => {
      if (change.to === "hungup") this.#finish();
    });
    // The call ends (or is transferred away): nothing left to listen to.
    void bridge.ended.then(() => {
      if (!channel.over) channel.hangup("NORMAL_CLEARING");
      this.#finish();
    });
    this.#connected(true);
  }

  #finish(): void {
    if (this.#state === "ended") return;
    const wasMonitoring = this.#state === "monitoring";
    this.#state = "ended";
    this.#ringing.abort();
    if (wasMonitoring) this.#request.callq.setWiretap(this.#request.accountId, this.supervisorId, undefined);
    this.#connected(false);
    this.#ended();
  }
}
