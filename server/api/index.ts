// Every REST resource of /v2, one module each, registered on the app.
import type { FastifyInstance } from "fastify";
import type { ApiDeps } from "./deps.js";
import { registerAuth } from "./auth.js";
import { registerDevices } from "./devices.js";

export function registerApi(app: FastifyInstance, deps: ApiDeps): void {
  registerAuth(app, deps);
  registerDevices(app, deps);
}

export type { ApiDeps };
