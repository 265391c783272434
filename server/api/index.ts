// Every REST resource of /v2, one module each, registered on the app.
import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "./deps.js";
import { registerAuth } from "./auth.js";
import { registerDevices } from "./devices.js";
import { registerDeviceStatus } from "./device-status.js";
import { registerCallflows } from "./callflows.js";
import { registerMedia } from "./media.js";
import { registerAccounts } from "./accounts.js";
import { registerUsers } from "./users.js";
import { registerBlacklists } from "./blacklists.js";
import { registerWebhooks } from "./webhooks.js";
import { registerWebhookAttempts } from "./webhook-attempts.js";
import { registerEvents } from "./events.js";
import { registerChannels } from "./channels.js";
import { registerCdrs } from "./cdrs.js";
import { registerRecordings } from "./recordings.js";
import { registerSim } from "./sim.js";
import { registerTextingSettings } from "./texting-settings.js";
import { registerSimMessages } from "./sim-messages.js";
import { registerCallqQueues } from "./callq-queues.js";
import { registerCallqRecipients } from "./callq-recipients.js";
import { registerVersions } from "./versions.js";
import { registerDirectory } from "./directory.js";
import { registerQuickConnects } from "./quick-connects.js";
import { registerUserPreferences } from "./user-preferences.js";
import { registerMissedCalls } from "./missed-calls.js";

export function registerApi(app: FastifyInstance, deps: ApiDeps): void {
  registerAuth(app, deps);
  registerDeviceStatus(app, deps);
  registerDevices(app, deps);
  registerCallflows(app, deps);
  registerMedia(app, deps);
  registerAccounts(app, deps);
  registerUsers(app, deps);
  registerBlacklists(app, deps);
  registerWebhooks(app, deps);
  registerWebhookAttempts(app, deps);
  registerEvents(app, deps);
  registerChannels(app, deps);
  registerCdrs(app, deps);
  registerRecordings(app, deps);
  registerSim(app, deps);
  registerTextingSettings(app, deps);
  registerSimMessages(app, deps);
  registerCallqQueues(app, deps);
  registerCallqRecipients(app, deps);
  registerDirectory(app, deps);
  registerQuickConnects(app, deps);
  registerUserPreferences(app, deps);
  registerMissedCalls(app, deps);
  registerVersions(app);
}

export type { ApiDeps };
