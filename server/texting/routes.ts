// The texting API under /texting/api (Textable style): Bearer `<account_uid>:<access_token>`
// auth, answers and failures as bare JSON (`{errors:[...]}` with 400, 401 for a bad token),
// never the platform envelope. Also the public route serving uploaded MMS images.
//
// Beyond service-api.md (the console needs them): GET /api/contacts/{id}/messages (the thread),
// POST /api/contacts/{id}/read (mark it read), POST /api/media (upload an image, raw bytes).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { sendAttachment } from "../http/binary.js";
import { ApiError } from "../http/errors.js";
import { ID_PATTERN } from "../store/index.js";
import { contactView } from "./contacts.js";
import { TextingError, unauthorized } from "./errors.js";
import { mediaPath } from "./media.js";
import { messageView, type TextingService } from "./service.js";
import type { TextingIdentity } from "./settings.js";

export const TEXTING_API_PREFIX = "/texting/api";

/** For the app: a texting path that cannot be routed (a 100+ character id) fails in texting words. */
export const TEXTING_PATH_FAILURES = { prefix: `${TEXTING_API_PREFIX}/`, answer: (_status: number, message: string) => ({ errors: [message] }) };

const identities = new WeakMap<FastifyRequest, TextingIdentity>();

function identityOf(request: FastifyRequest): TextingIdentity {
  const who = identities.get(request);
  if (!who) throw unauthorized();
  return who;
}

function idParam(request: FastifyRequest): string {
  const params = request.params as Record<string, string | undefined>;
  return params.id ?? "";
}

/** The failures of the texting API in its own shape. */
function textingFailure(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (error instanceof TextingError) return reply.status(error.status).send({ errors: error.errors });
  if (error instanceof ApiError && error.status < 500) {
    // The app's own checks (a body that is not JSON, too deep, too large) in texting words.
    const reason = error.code === "payload_too_large" ? "The request body is too large" : "The request body is not valid JSON";
    return reply.status(400).send({ errors: [reason] });
  }
  const status = typeof error === "object" && error !== null && "statusCode" in error ? Number(error.statusCode) : 500;
  if (status >= 400 && status < 500) return reply.status(400).send({ errors: ["The request could not be read"] });
  request.log.error({ err: error }, "texting request failed");
  return reply.status(500).send({ errors: ["Internal error"] });
}

export function registerTextingRoutes(app: FastifyInstance, texting: TextingService): void {
  app.register(
    async (api) => {
      api.setErrorHandler((error, request, reply) => textingFailure(error, request, reply));
      api.setNotFoundHandler((_request, reply) => reply.status(404).send({ errors: ["Not found"] }));
      // Images arrive as raw bytes, streamed to the store.
      api.addContentTypeParser(/^image\//, (_request, payload, done) => done(null, payload));
      // Before the body is read, so a stranger learns nothing about what they sent.
      api.addHook("onRequest", async (request) => {
        const who = await texting.authenticate(request.headers.authorization);
        if (!who) throw unauthorized();
        identities.set(request, who);
      });

      api.post("/send", async (request) => {
        const message = await texting.send(identityOf(request), request.body);
        // `status` is the string "true", as the hosted API answers; the id lets a client follow the message.
        return { status: "true", messageId: message.id, messageStatus: message.data.status };
      });

      api.post("/contacts", async (request) => contactView(await texting.createContact(identityOf(request), request.body)));

      api.get("/contacts", async (request) => {
        const query = request.query as Record<string, string | undefined>;
        const rows = await texting.listContacts(identityOf(request), query.search ?? "");
        return {
          contacts: rows.map(({ contact, last, unread }) => ({
            ...contactView(contact),
            ...(last ? { last_message: last.data.body, last_message_date: last.data.date } : {}),
            unread,
          })),
        };
      });

      api.get("/contacts/:id", async (request) => contactView(await texting.contact(identityOf(request), idParam(request))));

      api.post("/contacts/:id", async (request) => contactView(await texting.updateContact(identityOf(request), idParam(request), request.body)));

      api.get("/contacts/:id/messages", async (request) => ({
        messages: (await texting.thread(identityOf(request), idParam(request))).map(messageView),
      }));

      api.post("/contacts/:id/read", async (request) => ({ status: "true", marked: await texting.markRead(identityOf(request), idParam(request)) }));

      api.post("/media", async (request, reply) => {
        const who = identityOf(request);
        try {
          const doc = await texting.saveImage(who, request.body, request.headers["content-type"], Number(request.headers["content-length"] ?? 0));
          const host = request.headers.host ?? "127.0.0.1";
          return { url: `${request.protocol}://${host}${mediaPath(who.accountId, doc.id)}`, contentType: doc.data.content_type, length: doc.data.length };
        } catch (err) {
          // The client may still be sending the refused body.
          reply.header("Connection", "close");
          throw err;
        }
      });
    },
    { prefix: TEXTING_API_PREFIX },
  );

  app.register(
    async (files) => {
      files.setErrorHandler((error, request, reply) => textingFailure(error, request, reply));
      files.get("/texting/media/:account_id/:id", async (request, reply) => {
        const params = request.params as Record<string, string | undefined>;
        const accountId = params.account_id ?? "";
        const id = params.id ?? "";
        const found = ID_PATTERN.test(accountId) && ID_PATTERN.test(id) ? await texting.media.find(accountId, id) : null;
        if (!found) return reply.status(404).send({ errors: ["Not found"] });
        reply.header("X-Content-Type-Options", "nosniff").header("Cache-Control", "public, max-age=31536000, immutable");
        return sendAttachment(request, reply, { ...found, filename: found.name, inline: true }).then(() => reply);
      });
    },
  );
}
