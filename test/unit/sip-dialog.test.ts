// A dialog on its own: the early → confirmed → terminated machine (illegal moves throw, each move
// stamped from the clock and reported once), CSeq order both ways, the requests it writes, the table.
import { describe, expect, it } from "vitest";
import { DialogStateMachine, IllegalDialogTransition, type DialogStateChange } from "../../server/sip/dialog-state.js";
import { Dialog, dialogId, type DialogInit } from "../../server/sip/dialog.js";
import { DialogTable } from "../../server/sip/dialog-table.js";
import type { Flow } from "../../server/sip/flows.js";
import { parseSip } from "../../server/sip/message.js";

const clock = { t: 1_700_000_000_000, now(): number { return this.t; } };

const flow: Flow = { id: "f1", transport: "WS", localHost: "127.0.0.1:8000", isOpen: () => true, send: () => true };

const init: DialogInit = {
  callId: "call-1",
  localTag: "ours",
  remoteTag: "theirs",
  localParty: '"Sales" <sip:5001@demo.switchboard.local>;tag=ours',
  remoteParty: "<sip:agent1@demo.switchboard.local>;tag=theirs",
  remoteTarget: "sip:k3j2@abcd.invalid;transport=ws",
  localCseq: 1,
  remoteCseq: null,
  flowId: "f1",
};

describe("DialogStateMachine", () => {
  it("goes early → confirmed → terminated, stamping each move from the clock and reporting it once", () => {
    const changes: DialogStateChange[] = [];
    const machine = new DialogStateMachine(clock, (c) => changes.push(c));
    expect(machine.state).toBe("early");
    machine.transition("confirmed", "200 sent");
    clock.t += 5000;
    machine.transition("terminated", "bye");
    expect(changes).toEqual([
      { from: "early", to: "confirmed", at: 1_700_000_000_000, reason: "200 sent" },
      { from: "confirmed", to: "terminated", at: 1_700_000_005_000, reason: "bye" },
    ]);
  });

  it("goes early → terminated (rejected, cancelled) and refuses every move the diagram lacks", () => {
    const machine = new DialogStateMachine(clock, () => undefined);
    expect(machine.canMoveTo("early")).toBe(false);
    machine.transition("terminated", "cancel");
    expect(() => machine.transition("confirmed", "late 200")).toThrow(IllegalDialogTransition);
    expect(() => machine.transition("terminated", "again")).toThrow(/cannot go from terminated to terminated/);
    const confirmed = new DialogStateMachine(clock, () => undefined);
    confirmed.transition("confirmed", "200");
    expect(() => confirmed.transition("early", "back")).toThrow(IllegalDialogTransition);
  });
});

describe("Dialog", () => {
  it("takes the far end's requests in CSeq order and refuses an older one (§12.2.2)", () => {
    const dialog = new Dialog(init, clock);
    expect(dialog.acceptRemoteCseq(5)).toBe(true);
    expect(dialog.acceptRemoteCseq(7)).toBe(true);
    expect(dialog.acceptRemoteCseq(6)).toBe(false);
    expect(dialog.acceptRemoteCseq(8)).toBe(true);
  });

  it("counts its own CSeq on from the INVITE's", () => {
    const dialog = new Dialog(init, clock);
    expect([dialog.nextCseq(), dialog.nextCseq()]).toEqual([2, 3]);
  });

  it("writes a request to the remote target with its parties, Call-ID and CSeq, a Contact only on INVITE", () => {
    const dialog = new Dialog(init, clock);
    const bye = parseSip(dialog.request(flow, { method: "BYE", branch: "z9hG4bKb1", cseq: 2 }));
    expect(bye.kind).toBe("request");
    if (bye.kind !== "request") return;
    expect(bye.uri.toString()).toBe(init.remoteTarget);
    expect(bye.message.getHeader("from")).toBe(init.localParty);
    expect(bye.message.getHeader("to")).toBe(init.remoteParty);
    expect(bye.message.getHeader("via")).toBe("SIP/2.0/WS 127.0.0.1:8000;branch=z9hG4bKb1");
    expect(bye.message.getHeader("cseq")).toBe("2 BYE");
    expect(bye.message.hasHeader("contact")).toBe(false);
    const invite = parseSip(dialog.request(flow, { method: "INVITE", branch: "z9hG4bKi1", cseq: 3, headers: [["Content-Type", "application/sdp"]], body: "v=0\r\n" }));
    if (invite.kind !== "request") throw new Error("not a request");
    expect(invite.message.getHeader("contact")).toBe("<sip:switchboard@127.0.0.1:8000;transport=ws>");
    expect(invite.message.body).toBe("v=0\r\n");
  });

  it("is found in the table by Call-ID, our tag as To and theirs as From, and by flow", () => {
    const table = new DialogTable<Dialog>();
    const dialog = new Dialog(init, clock);
    table.add(dialog);
    expect(dialog.id).toBe(dialogId("call-1", "ours", "theirs"));
    expect(table.find("call-1", "ours", "theirs")).toBe(dialog);
    expect(table.find("call-1", "theirs", "ours")).toBeUndefined();
    expect(table.onFlow("f1")).toEqual([dialog]);
    table.remove(dialog);
    expect(table.size).toBe(0);
  });
});
