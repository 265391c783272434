// /v2/accounts/{account_id}/sim/messages: the simulated carrier's side for demos, training and
// tests. POST injects an inbound text (from a contact to one of the account's texting numbers);
// /sim/messages/unreachable lists or sets the numbers the carrier cannot reach (their messages
// fail). Admins only, as simulated calls: a simulated text can claim any sender.
import type { FastifyInstance } from "fastify";
import { registerEndpoint, type Ctx, type Handler } from "../http/endpoint.js";
import { dataObject } from "../http/resource.js";
import { fieldError, validate, type JsonSchema } from "../http/validation.js";
import { contactView, isE164, isMediaUrl, MAX_MEDIA, MAX_MESSAGE_LENGTH, messageView, NotATextingNumber, type TextingService } from "../texting/index.js";
import type { ApiDeps } from "./deps.js";
import { textingService } from "./texting-settings.js";

const injectSchema: JsonSchema = {
  type: "object",
  required: ["from", "to", "body"],
  properties: {
    from: { type: "string", minLength: 1, maxLength: 32, description: "the contact's number, E.164" },
    to: { type: "string", minLength: 1, maxLength: 32, description: "a texting number of the account, E.164" },
    body: { type: "string", maxLength: MAX_MESSAGE_LENGTH, description: "the text; STOP, UNSUBSCRIBE, CANCEL, END or QUIT opts the contact out, START back in" },
    media: { type: "array", maxItems: MAX_MEDIA, items: { type: "string", maxLength: 2048 }, description: "URLs of MMS attachments" },
  },
};

const unreachableSchema: JsonSchema = {
  type: "object",
  required: ["numbers"],
  properties: { numbers: { type: "array", maxItems: 1000, items: { type: "string" }, description: "E.164 numbers whose messages fail" } },
};

export function registerSimMessages(app: FastifyInstance, deps: ApiDeps): void {
  const texting = (): TextingService => textingService(deps);
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";

  const inject: Handler = async (ctx) => {
    const data = dataObject(ctx);
    validate(injectSchema, data);
    for (const field of ["from", "to"] as const) if (!isE164(data[field])) throw fieldError(field, "e164", "Value is not an E.164 phone number", data[field]);
    const media = (data.media ?? []) as unknown[];
    const bad = media.findIndex((m) => !isMediaUrl(m));
    if (bad >= 0) throw fieldError(`media.${bad}`, "format", "Value is not a valid http(s) URL", media[bad]);
    try {
      const { message, contact } = await texting().receive(accountOf(ctx), {
        from: String(data.from),
        to: String(data.to),
        body: String(data.body),
        media: media as string[],
      });
      return { data: { ...messageView(message), contact: contactView(contact) }, status: 201 };
    } catch (err) {
      if (err instanceof NotATextingNumber) throw fieldError("to", "texting_number", err.message, data.to);
      throw err;
    }
  };

  const setUnreachable: Handler = async (ctx) => {
    const data = dataObject(ctx);
    validate(unreachableSchema, data);
    const numbers = data.numbers as string[];
    const bad = numbers.findIndex((n) => !isE164(n));
    if (bad >= 0) throw fieldError(`numbers.${bad}`, "e164", "Value is not an E.164 phone number", numbers[bad]);
    return { data: { numbers: await texting().carrier.setUnreachable(accountOf(ctx), numbers) } };
  };

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/sim/messages",
    access: "account",
    tag: "sim",
    verbs: {
      POST: { summary: "Inject an inbound text from a contact (from) to a texting number of the account (to)", admin: true, body: injectSchema, answers: [201], handler: inject },
      PUT: { summary: "Inject an inbound text (as POST)", admin: true, body: injectSchema, handler: inject },
    },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/sim/messages/unreachable",
    access: "account",
    tag: "sim",
    verbs: {
      GET: { summary: "The numbers the simulated carrier cannot reach", handler: async (ctx) => ({ data: { numbers: await texting().carrier.unreachable(accountOf(ctx)) } }) },
      POST: { summary: "Set exactly which numbers the simulated carrier cannot reach (their messages fail)", admin: true, body: unreachableSchema, handler: setUnreachable },
    },
  });
}
