// Paths of an API version this server does not serve. Version 1 answers as the hosted service's
// own API does: 410 gone, telling the client to move its code to version 2, whatever the method.
import type { FastifyInstance } from "fastify";
import { ApiError } from "../http/errors.js";

export function registerVersions(app: FastifyInstance): void {
  const gone = async (): Promise<never> => {
    throw new ApiError("gone", { message: "API version 1 is not supported. Please upgrade your code to use version 2 (/v2/...)." });
  };
  app.all("/v1", gone);
  app.all("/v1/*", gone);
}
