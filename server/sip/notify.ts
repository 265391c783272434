// NOTIFY `Event: check-sync`: asks a registered phone to re-read its configuration. Sent out of
// dialog to each of the device's bindings, over the flow each registered on.
import type { RandomSource } from "../clock.js";
import { serverContact, viaOf, type Flow, type FlowTable } from "./flows.js";
import { buildRequest, newBranch, randomHex } from "./message.js";
import type { Binding, Registrar } from "./registrar.js";
import type { ClientTransactions } from "./transactions.js";

export interface NotifyDeps {
  registrar: Registrar;
  flows: FlowTable;
  transactions: ClientTransactions;
  random: RandomSource;
}

export interface RequestIds {
  branch: string;
  fromTag: string;
  callId: string;
  cseq: number;
}

/**
 * The NOTIFY for one binding. Its Request-URI is the registered contact: a WebSocket UA's AOR
 * host is not where it is, and sip.js refuses a request naming neither its AOR nor its contact.
 */
export function checkSyncRequest(binding: Binding, flow: Flow, ids: RequestIds): string {
  return buildRequest({
    method: "NOTIFY",
    uri: binding.contact,
    headers: [
      ["Via", viaOf(flow, ids.branch)],
      ["Max-Forwards", "70"],
      ["From", `<sip:${binding.aor}>;tag=${ids.fromTag}`],
      ["To", `<sip:${binding.aor}>`],
      ["Call-ID", ids.callId],
      ["CSeq", `${ids.cseq} NOTIFY`],
      ["Contact", serverContact(flow)],
      ["Event", "check-sync"],
      ["Subscription-State", "terminated"],
    ],
  });
}

/** Sends check-sync to every live binding of the device; answers how many NOTIFYs went out. */
export function sendCheckSync(deps: NotifyDeps, accountId: string, deviceId: string): number {
  let sent = 0;
  for (const binding of deps.registrar.bindings(accountId, deviceId)) {
    const flow = deps.flows.get(binding.flowId);
    if (!flow?.isOpen()) continue;
    // Each NOTIFY is a request of its own (new Call-ID), so its CSeq starts the sequence at 1.
    const ids: RequestIds = { branch: newBranch(deps.random), fromTag: randomHex(deps.random), callId: randomHex(deps.random, 16), cseq: 1 };
    deps.transactions.start({ branch: ids.branch, method: "NOTIFY", cseq: ids.cseq, flowId: flow.id });
    if (flow.send(checkSyncRequest(binding, flow, ids))) sent++;
  }
  return sent;
}
