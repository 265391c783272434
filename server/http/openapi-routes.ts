// The routes that are not /v2 endpoints of the catalogue, described by hand for the OpenAPI
// document: the texting API (Textable style: bare JSON, its own Bearer credentials), its public
// media files, the two websocket upgrades (/events, /sip), the machine-readable documents
// themselves, version 1's 410 and the console's root page. Kept beside the routes' own shapes:
// the contract tests compare them with what the server sends.
import type { JsonSchema } from "./validation.js";

type Doc = Record<string, unknown>;

const E164: JsonSchema = { type: "string", pattern: "^\\+[1-9][0-9]{6,14}$", description: "an E.164 number" };
const MESSAGE_STATUS: JsonSchema = { type: "string", enum: ["queued", "sent", "delivered", "failed", "received"] };

export const TEXTING_ERRORS: JsonSchema = {
  type: "object",
  required: ["errors"],
  properties: { errors: { type: "array", items: { type: "string" } } },
};

export const TEXTING_CONTACT: JsonSchema = {
  type: "object",
  required: ["id", "phoneNumber", "fullName", "optedOut"],
  properties: {
    id: { type: "string", description: "the ConversationID of the user's thread with this contact" },
    phoneNumber: E164,
    fullName: { type: "string" },
    email: { type: "string" },
    optedOut: { type: "boolean" },
    optOutKeyword: { type: "string" },
    optedOutAt: { type: "string" },
  },
};

export const TEXTING_MESSAGE: JsonSchema = {
  type: "object",
  required: ["id", "conversationId", "userId", "direction", "from", "to", "message", "media", "status", "read", "date"],
  properties: {
    id: { type: "string" },
    conversationId: { type: "string" },
    userId: { type: "string" },
    direction: { type: "string", enum: ["in", "out"] },
    from: { type: "string" },
    to: { type: "string" },
    message: { type: "string" },
    media: { type: "array", items: { type: "string", format: "uri" } },
    status: MESSAGE_STATUS,
    error: { type: "string" },
    read: { type: "boolean" },
    date: { type: "integer", description: "Unix milliseconds" },
  },
};

const CONTACT_INPUT: JsonSchema = {
  type: "object",
  required: ["phoneNumber"],
  properties: { phoneNumber: E164, fullName: { type: "string", maxLength: 128, description: "defaults to the number" }, email: { type: "string", maxLength: 254 } },
};

const json = (schema: JsonSchema): Doc => ({ "application/json": { schema } });

const textingFailures: Doc = {
  "400": { description: "invalid input or an unknown contact, one message per problem", content: json(TEXTING_ERRORS) },
  "401": { description: "missing or wrong Bearer credentials", content: json(TEXTING_ERRORS) },
};

const texting = (op: Doc, extra: Doc = {}): Doc => ({
  tags: ["texting"],
  security: [{ textingBearer: [] }],
  ...op,
  responses: { ...(op.responses as Doc), ...textingFailures, ...extra },
});

const contactId: Doc = { name: "id", in: "path", required: true, schema: { type: "string" } };

const websocket = (summary: string, description: string): Doc => ({
  get: {
    tags: ["websockets"],
    summary,
    description,
    parameters: [
      { name: "Upgrade", in: "header", required: true, schema: { type: "string", enum: ["websocket"] } },
      { name: "Connection", in: "header", required: true, schema: { type: "string" } },
    ],
    responses: {
      "101": { description: "switching protocols: the websocket is open" },
      "404": { description: "not a websocket upgrade request" },
    },
  },
});

const versionOneGone = (parameters: Doc[]): Doc =>
  Object.fromEntries(
    ["get", "put", "post", "patch", "delete"].map((verb) => [
      verb,
      {
        tags: ["versions"],
        summary: "Version 1 is not served: 410 gone, naming version 2",
        parameters,
        responses: { "410": { description: "gone", content: json({ $ref: "#/components/schemas/Failure" }) } },
      },
    ]),
  );

export function extraPaths(textingPrefix: string): Record<string, Doc> {
  return {
    [`${textingPrefix}/send`]: {
      post: texting({
        summary: "Send a text (SMS, or MMS with media) from one of the user's numbers",
        requestBody: {
          required: true,
          content: json({
            type: "object",
            required: ["to", "from", "message"],
            properties: {
              to: E164,
              from: { ...E164, description: "one of the user's texting numbers" },
              message: { type: "string", maxLength: 1600 },
              media: { type: "array", maxItems: 10, items: { type: "string", format: "uri" } },
              sendStatus: { type: "string", enum: ["sent"], description: "record a message already sent elsewhere; the carrier is not used" },
            },
          }),
        },
        responses: {
          "200": {
            description: "accepted",
            content: json({
              type: "object",
              required: ["status", "messageId", "messageStatus"],
              properties: { status: { type: "string", enum: ["true"] }, messageId: { type: "string" }, messageStatus: MESSAGE_STATUS },
            }),
          },
        },
      }),
    },
    [`${textingPrefix}/contacts`]: {
      get: texting({
        summary: "The user's contacts with their last message and unread count",
        parameters: [{ name: "search", in: "query", required: false, schema: { type: "string" } }],
        responses: {
          "200": {
            description: "the contacts",
            content: json({
              type: "object",
              required: ["contacts"],
              properties: {
                contacts: {
                  type: "array",
                  items: {
                    allOf: [
                      TEXTING_CONTACT,
                      { type: "object", required: ["unread"], properties: { last_message: { type: "string" }, last_message_date: { type: "integer", description: "Unix milliseconds" }, unread: { type: "integer", minimum: 0 } } },
                    ],
                  },
                },
              },
            }),
          },
        },
      }),
      post: texting({ summary: "Create a contact", requestBody: { required: true, content: json(CONTACT_INPUT) }, responses: { "200": { description: "the contact", content: json(TEXTING_CONTACT) } } }),
    },
    [`${textingPrefix}/contacts/{id}`]: {
      get: texting({ summary: "One contact", parameters: [contactId], responses: { "200": { description: "the contact", content: json(TEXTING_CONTACT) } } }),
      post: texting(
        { summary: "Change a contact", parameters: [contactId], requestBody: { required: true, content: json(CONTACT_INPUT) }, responses: { "200": { description: "the contact", content: json(TEXTING_CONTACT) } } },
      ),
    },
    [`${textingPrefix}/contacts/{id}/messages`]: {
      get: texting(
        {
          summary: "The thread with a contact, oldest first",
          parameters: [contactId],
          responses: { "200": { description: "the messages", content: json({ type: "object", required: ["messages"], properties: { messages: { type: "array", items: TEXTING_MESSAGE } } }) } },
        },
      ),
    },
    [`${textingPrefix}/contacts/{id}/read`]: {
      post: texting(
        {
          summary: "Mark the thread with a contact read",
          parameters: [contactId],
          responses: {
            "200": {
              description: "how many messages were marked",
              content: json({ type: "object", required: ["status", "marked"], properties: { status: { type: "string", enum: ["true"] }, marked: { type: "integer", minimum: 0 } } }),
            },
          },
        },
      ),
    },
    [`${textingPrefix}/media`]: {
      post: texting({
        summary: "Upload an image for an MMS (the raw bytes as the body)",
        requestBody: { required: true, content: { "image/*": { schema: { type: "string", format: "binary" } } } },
        responses: {
          "200": {
            description: "where the image is served",
            content: json({ type: "object", required: ["url", "contentType", "length"], properties: { url: { type: "string", format: "uri" }, contentType: { type: "string" }, length: { type: "integer" } } }),
          },
        },
      }),
    },
    "/texting/media/{account_id}/{id}": {
      get: {
        tags: ["texting"],
        summary: "An uploaded MMS image (public: carriers and phones fetch it by URL)",
        parameters: [
          { name: "account_id", in: "path", required: true, schema: { type: "string" } },
          { name: "id", in: "path", required: true, schema: { type: "string" } },
        ],
        responses: {
          "200": { description: "the image", content: { "image/*": { schema: { type: "string", format: "binary" } } } },
          "206": { description: "the requested byte range", content: { "image/*": { schema: { type: "string", format: "binary" } } } },
          "404": { description: "no such image", content: json(TEXTING_ERRORS) },
        },
      },
    },
    "/events": websocket(
      "The event websocket (blackhole protocol)",
      "Subscribe with an auth token and bindings, receive events. Also served on the events port (5555 by default) at / and /events. Its messages are described by the AsyncAPI document at /v2/asyncapi.json.",
    ),
    "/sip": websocket("SIP over WebSocket (RFC 7118)", "Devices register and call here; the `sip` subprotocol is required."),
    "/v2/openapi.json": {
      get: {
        tags: ["documents"],
        summary: "This document",
        responses: { "200": { description: "the OpenAPI 3.0 document of every HTTP route", content: json({ type: "object", required: ["openapi", "paths"] }) } },
      },
    },
    "/v2/asyncapi.json": {
      get: {
        tags: ["documents"],
        summary: "The AsyncAPI document: event websocket messages, webhook and texting relay payloads",
        responses: { "200": { description: "the AsyncAPI 3.0 document", content: json({ type: "object", required: ["asyncapi", "channels"] }) } },
      },
    },
    "/v1": versionOneGone([]),
    "/v1/{path}": versionOneGone([{ name: "path", in: "path", required: true, schema: { type: "string" }, description: "anything under /v1" }]),
    "/": {
      get: {
        tags: ["console"],
        summary: "The console (the built renderer), or a plain note when it is not built",
        responses: { "200": { description: "the page", content: { "text/html": { schema: { type: "string" } }, "text/plain": { schema: { type: "string" } } } } },
      },
    },
  };
}
