// Callflow module `callq_recipient`: a caller acts on a recipient's state from a phone (the demo
// feature codes *20..*23). The recipient is linked by the calling device's owner, by a pin typed
// on the keypad, or both (device first); the action goes to the queue engine; a beep says how it went.
import type { CallflowModule, ModuleRun } from "../../calls/callflow-executor.js";
import type { StoredDoc } from "../../store/index.js";
import { CallqError, type CallqEngine } from "../../callq/engine.js";
import { PHONE_ACTIONS, type PhoneAction } from "../../callq/recipient-state.js";
import { isRecipientUser } from "../store-binding.js";
import { DEFAULT_FAILURE_MEDIA, DEFAULT_PIN_PROMPT, DEFAULT_SUCCESS_MEDIA, listenForDigits, mediaUp, playPrompt, type DigitCollection } from "./prompts.js";

/** How the module finds the recipient: the calling device's owner, a pin, or both (device first). */
export const LINK_METHODS = ["device", "pin", "both"] as const;
export type LinkMethod = (typeof LINK_METHODS)[number];

/** Pin entry: tries, the wait for the first digit after the prompt, and the pause that ends it. */
export const PIN_TRIES = 3;
export const PIN_FIRST_DIGIT_MS = 10_000;
export const PIN_INTER_DIGIT_MS = 5_000;
const PIN_MAX_DIGITS = 16;

function linkMethodOf(value: unknown): LinkMethod {
  return value === "device" || value === "pin" ? value : "both";
}

function actionOf(value: unknown): PhoneAction | undefined {
  return PHONE_ACTIONS.find((a) => a === value);
}

function callqOf(user: StoredDoc): Record<string, unknown> {
  const callq = user.data.callq;
  return typeof callq === "object" && callq !== null && !Array.isArray(callq) ? (callq as Record<string, unknown>) : {};
}


export function callqRecipientModule(engine: CallqEngine): CallflowModule {
  return async (run) => {
    const { channel, ctx, data, signal } = run;
    const action = actionOf(data.action);
    const method = linkMethodOf(data.link_method);
    // Listening starts before the answer: a caller who types the pin at once loses no digit to
    // the answer, the media coming up or the device lookup.
    const digits = method === "device" ? undefined : listenForDigits(ctx.clock, channel, signal);
    try {
      return await act(run, engine, action, method, digits);
    } finally {
      digits?.stop();
    }
  };
}

async function act(
  run: ModuleRun,
  engine: CallqEngine,
  action: PhoneAction | undefined,
  method: LinkMethod,
  digits: DigitCollection | undefined,
): Promise<{ kind: "handled" }> {
  const { channel, ctx, data, signal } = run;
  const up = mediaUp(ctx.clock, channel);
  if (!(await channel.answer()) || signal.aborted) return { kind: "handled" };
  await up;
  const fail = async (reason: string, extra: object = {}): Promise<{ kind: "handled" }> => {
    ctx.logger.info({ call_id: channel.id, action: data.action, ...extra }, `callq_recipient: ${reason}`);
    await playPrompt(ctx, channel, data.failure_media, DEFAULT_FAILURE_MEDIA, signal);
    return { kind: "handled" };
  };
  if (action === undefined) return fail("unknown action");
  const user = await link(run, method, digits);
  if (signal.aborted || channel.over) return { kind: "handled" };
  if (!user) return fail("no recipient could be linked to the caller");
  const targetQueue = typeof data.target_queue === "string" && data.target_queue !== "" ? data.target_queue : undefined;
  const options = targetQueue !== undefined && (action === "ready" || action === "away") ? { queueId: targetQueue } : undefined;
  try {
    await engine.recipientAction(channel.accountId, user.id, action, options);
  } catch (err) {
    if (err instanceof CallqError) return fail(`the action was refused (${err.code})`, { recipient_id: user.id, err: err.message });
    throw err;
  }
  ctx.logger.info({ call_id: channel.id, recipient_id: user.id, action }, "callq_recipient: action done");
  await playPrompt(ctx, channel, data.success_media, DEFAULT_SUCCESS_MEDIA, signal);
  return { kind: "handled" };
}

async function link(run: ModuleRun, method: LinkMethod, digits: DigitCollection | undefined): Promise<StoredDoc | undefined> {
  if (method !== "pin") {
    const owner = await deviceOwner(run);
    if (owner || method === "device" || !digits) return owner;
  }
  return digits ? byPin(run, digits) : undefined;
}

/** The calling device's owner, when a call-queue-enabled user (a simulated caller has none). */
async function deviceOwner(run: ModuleRun): Promise<StoredDoc | undefined> {
  const { channel, ctx } = run;
  const ownerId = channel.identity.authorizingType === "sim" ? undefined : channel.identity.ownerId;
  if (ownerId === undefined) return undefined;
  const user = (await ctx.store.account(channel.accountId, "users")).get(ownerId);
  return isRecipientUser(user) ? user : undefined;
}

/** Prompts for a pin (# or a pause ends it) up to PIN_TRIES times; the recipient whose callq.pin it is. */
async function byPin(run: ModuleRun, digits: DigitCollection): Promise<StoredDoc | undefined> {
  const { channel, ctx, data, signal } = run;
  for (let attempt = 1; attempt <= PIN_TRIES; attempt++) {
    await playPrompt(ctx, channel, data.pin_prompt_media, DEFAULT_PIN_PROMPT, signal);
    const pin = await digits.collect({ firstDigitMs: PIN_FIRST_DIGIT_MS, interDigitMs: PIN_INTER_DIGIT_MS, maxDigits: PIN_MAX_DIGITS });
    if (pin === undefined) return undefined;
    if (pin !== "") {
      const users = (await ctx.store.account(channel.accountId, "users")).all();
      const user = users.find((u) => isRecipientUser(u) && pinOf(u) === pin);
      if (user) return user;
    }
    ctx.logger.info({ call_id: channel.id, attempt }, "callq_recipient: wrong or no pin");
    if (attempt < PIN_TRIES) await playPrompt(ctx, channel, data.failure_media, DEFAULT_FAILURE_MEDIA, signal);
  }
  return undefined;
}

function pinOf(user: StoredDoc): string | undefined {
  const pin = callqOf(user).pin;
  return typeof pin === "string" && pin !== "" ? pin : typeof pin === "number" ? String(pin) : undefined;
}
