// The texting layer's public face: start the service (resuming carrier steps and relay
// deliveries), mount its routes on the app, and the types the platform API needs.
import type { FastifyInstance } from "fastify";
import { registerTextingRoutes } from "./routes.js";
import { TextingService, type TextingOptions } from "./service.js";

export async function startTexting(app: FastifyInstance, options: TextingOptions): Promise<TextingService> {
  const texting = await TextingService.start(options);
  registerTextingRoutes(app, texting);
  return texting;
}

export { TextingService, NotATextingNumber, messageView, messageEventData, relayPayload, isMediaUrl, MAX_MEDIA, MAX_MESSAGE_LENGTH, type InboundText, type TextingOptions } from "./service.js";
export { contactView } from "./contacts.js";
export { NumberTakenError, settingsView, type SettingsView, type TextingIdentity } from "./settings.js";
export { isE164 } from "./numbers.js";
export { RELAY_ATTEMPTS_COLLECTION, relayAttemptOrder, type RelayPayload } from "./relay.js";
export { seedTextingNumbers, demoTextingNumber } from "./demo.js";
