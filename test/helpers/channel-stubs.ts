// Stand-ins for a channel's SIP side and media leg, recording what the channel asks of them, so
// the channel's state machine and the callflow executor are tested without sockets.
import { EventEmitter } from "node:events";
import { silence, type AudioSource, type LegEvents } from "../../server/media/index.js";
import type { CallParty, DeviceRef, InboundCall, InboundCallEvents, OutboundCall, OutboundCallEvents } from "../../server/sip/call-signalling.js";
import type { ChannelIdentity } from "../../server/calls/channel.js";

export class StubLeg extends EventEmitter<LegEvents> {
  readonly incoming: AudioSource = silence;
  played: AudioSource | undefined;
  closedWith: string | undefined;
  readonly dtmfSent: string[] = [];

  async acceptOffer(offer: string): Promise<string> {
    return `answer to ${offer}`;
  }

  async acceptAnswer(): Promise<void> {}

  async close(reason = "hangup"): Promise<void> {
    this.closedWith ??= reason;
  }

  play(source: AudioSource = silence): void {
    this.played = source;
  }

  async sendDtmf(digits: string): Promise<void> {
    this.dtmfSent.push(digits);
  }
}

export class StubInbound extends EventEmitter<InboundCallEvents> implements InboundCall {
  readonly device: DeviceRef = { accountId: "a".repeat(32), deviceId: "d".repeat(32) };
  readonly from: CallParty = { user: "1001", display: "Ada Admin" };
  readonly to: CallParty = { user: "1002" };
  readonly dialled = "1002";
  readonly offer = "offer-sdp";
  readonly headers = new Map<string, string[]>();
  readonly actions: string[] = [];

  constructor(readonly callId = "inbound-1") {
    super();
  }

  ringing(): void {
    this.actions.push("180");
  }

  async answer(sdp: string): Promise<void> {
    this.actions.push(`200 ${sdp}`);
  }

  reject(code: number): void {
    this.actions.push(`reject ${code}`);
  }

  async hangup(): Promise<void> {
    this.actions.push("BYE");
  }

  async reinvite(): Promise<string> {
    return "answer";
  }
}

export class StubOutbound extends EventEmitter<OutboundCallEvents> implements OutboundCall {
  readonly device: DeviceRef = { accountId: "a".repeat(32), deviceId: "e".repeat(32) };
  readonly actions: string[] = [];

  constructor(readonly callId = "outbound-1") {
    super();
  }

  cancel(): void {
    this.actions.push("CANCEL");
  }

  async hangup(): Promise<void> {
    this.actions.push("BYE");
  }

  async reinvite(): Promise<string> {
    return "answer";
  }
}

export function identity(overrides: Partial<ChannelIdentity> = {}): ChannelIdentity {
  return {
    accountId: "a".repeat(32),
    realm: "demo.switchboard.local",
    deviceId: "d".repeat(32),
    username: "admin",
    ownerId: "o".repeat(32),
    presenceId: "1001@demo.switchboard.local",
    caller: { name: "Ada Admin", number: "1001" },
    callee: { name: "1002", number: "1002" },
    destination: "1002",
    request: "1002@demo.switchboard.local",
    from: "admin@demo.switchboard.local",
    to: "1002@demo.switchboard.local",
    ...overrides,
  };
}

/** A clock the test moves by hand. */
export { ManualClock } from "../../server/clock-control.js";
