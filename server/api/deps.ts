// What every api/ module is given: the endpoint plumbing, the account collections, and the
// services it calls.
import type { AuthService } from "../auth/index.js";
import type { ResourceDeps } from "../http/resource.js";
import type { Collection, Store } from "../store/index.js";
import type { SipService } from "../sip/index.js";
import type { Events } from "../events/index.js";
import type { CallEngine } from "../calls/index.js";
import type { SimCallers } from "../sim/callers.js";
import type { TextingService } from "../texting/index.js";
import type { CallqEngine } from "../callq/engine.js";
import type { WebhookFaults } from "../events/webhook-faults.js";

export interface ApiDeps extends ResourceDeps {
  auth: AuthService;
  /** A global collection (accounts). */
  global(name: string): Promise<Collection>;
  store: Store;
  /** Registrations and check-sync; absent when the server runs without SIP. */
  sip?: SipService;
  /** The bus and the event log; absent when the server runs without events. */
  events?: Events;
  /** Live channels and their commands; absent when the server runs without the call engine. */
  calls?: CallEngine;
  /** Simulated callers; absent when the server runs without the call engine. */
  sim?: SimCallers;
  /** Texting settings, the simulated carrier and inbound texts; absent when texting is not running. */
  texting?: TextingService;
  /** Call queues and recipients; absent when the server runs without the queue engine. */
  callq?: CallqEngine;
  /** Webhook failure windows (training faults); absent when the server runs without webhooks. */
  webhookFaults?: WebhookFaults;
}
