// /v2/accounts/{account_id}/channels (and a user's or a device's): the live call legs, one leg's
// details, and the commands on it (hangup, transfer, break, callflow, intercept, merge), answered 202.
import type { FastifyInstance } from "fastify";
import { toGregorianSeconds } from "../clock.js";
import { ChannelCommandError, type Channel, type InterceptRequest, type TransferRequest } from "../calls/index.js";
import { registerEndpoint, type AuthContext, type Ctx, type Handler, type Outcome } from "../http/endpoint.js";
import { ApiError } from "../http/errors.js";
import { filterFromQuery } from "../http/filters.js";
import { paginate } from "../http/paging.js";
import { dataObject, notFound, type Data } from "../http/resource.js";
import { fieldError, type JsonSchema } from "../http/validation.js";
import type { ApiDeps } from "./deps.js";

export const CHANNEL_ACTIONS = ["transfer", "hangup", "break", "callflow", "intercept", "merge"] as const;
type ChannelAction = (typeof CHANNEL_ACTIONS)[number];

function isAction(value: unknown): value is ChannelAction {
  return CHANNEL_ACTIONS.some((a) => a === value);
}

const commandSchema: JsonSchema = {
  type: "object",
  required: ["action"],
  properties: {
    action: { type: "string", enum: [...CHANNEL_ACTIONS] },
    target: { type: "string", description: "transfer: an extension or number (as dialled), or a user's or device's id" },
    "transfer-type": { type: "string", enum: ["blind", "attended"] },
    leg: { type: "string", enum: ["self", "bleg"] },
    moh: { type: "string", description: "transfer: media id of the music on hold" },
    takeback_dtmf: { type: "string", pattern: "^[0-9*#]+$" },
    id: { type: "string", description: "callflow: the callflow to run" },
    target_type: { type: "string", enum: ["device", "user"] },
    target_id: { type: "string" },
    unbridged_only: { type: "boolean" },
    target_call_id: { type: "string", description: "merge: the uuid of the user's other call leg, whose party joins this channel's call" },
  },
};

/** A list row, as the hosted service's channel lists. */
export function channelRow(channel: Channel): Data {
  const id = channel.identity;
  return {
    uuid: channel.id,
    answered: channel.answered,
    authorizing_id: id.deviceId,
    authorizing_type: id.authorizingType ?? "device",
    destination: id.destination,
    direction: channel.direction,
    other_leg: channel.otherLeg,
    owner_id: id.ownerId,
    presence_id: id.presenceId,
    timestamp: toGregorianSeconds(channel.createdAt),
    username: id.username,
  };
}

/** The details of one leg: the row plus who calls whom, how long, and whether it holds. */
export function channelDetail(channel: Channel, nowMs: number): Data {
  const id = channel.identity;
  return {
    ...channelRow(channel),
    call_id: channel.id,
    caller_id_name: id.caller.name,
    caller_id_number: id.caller.number,
    callee_id_name: id.callee.name,
    callee_id_number: id.callee.number,
    elapsed_s: Math.max(0, Math.floor((nowMs - channel.createdAt) / 1000)),
    is_onhold: channel.state === "held",
    state: channel.state,
  };
}

/** Rows filtered by the query's filters (on the row fields), sorted by start then uuid, paged. */
function listOf(channels: Channel[], ctx: Ctx): Outcome {
  const test = filterFromQuery(ctx.req.query);
  const rows = channels
    .map((c) => ({ channel: c, row: channelRow(c) }))
    .filter(({ channel, row }) => {
      const at = toGregorianSeconds(channel.createdAt);
      return test({ id: channel.id, created: at, modified: at, data: row });
    });
  const page = paginate(rows, { key: ({ channel }) => `${String(channel.createdAt).padStart(16, "0")}-${channel.id}` }, ctx.req.query);
  return { data: page.rows.map(({ row }) => row), paging: page.paging };
}

function text(data: Data, key: string): string | undefined {
  const value = data[key];
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw fieldError(key, "type", "Value is not of type string", value);
  return value;
}

function oneOf<T extends string>(data: Data, key: string, values: readonly T[], fallback: T): T {
  const value = text(data, key);
  if (value === undefined) return fallback;
  const found = values.find((v) => v === value);
  if (!found) throw fieldError(key, "enum", `Value not found in enumerated list of values: ${values.join(", ")}`, value);
  return found;
}

function transferRequest(data: Data): TransferRequest {
  const target = text(data, "target");
  if (target === undefined || target === "") throw fieldError("target", "required", "a transfer needs a target (an extension or number)");
  const takeback = text(data, "takeback_dtmf");
  if (takeback !== undefined && !/^[0-9*#]+$/.test(takeback)) throw fieldError("takeback_dtmf", "pattern", "Value is not a DTMF sequence (0-9, *, #)", takeback);
  return {
    target,
    type: oneOf(data, "transfer-type", ["blind", "attended"], "blind"),
    leg: oneOf(data, "leg", ["self", "bleg"], "self"),
    moh: text(data, "moh"),
    takebackDtmf: takeback,
  };
}

function interceptRequest(data: Data): InterceptRequest {
  const targetType = text(data, "target_type");
  if (targetType === undefined) throw fieldError("target_type", "required", "intercept needs target_type: device or user");
  const targetId = text(data, "target_id");
  if (targetId === undefined || targetId === "") throw fieldError("target_id", "required", "intercept needs the target_id of the device or user");
  const unbridgedOnly = data.unbridged_only;
  if (unbridgedOnly !== undefined && typeof unbridgedOnly !== "boolean") throw fieldError("unbridged_only", "type", "Value is not of type boolean", unbridgedOnly);
  return { targetType: oneOf(data, "target_type", ["device", "user"], "device"), targetId, unbridgedOnly: unbridgedOnly ?? true };
}

/**
 * The leg a merge joins to the channel's call: a live leg of the account, and both legs the
 * caller's own (their devices' legs), unless the caller is an admin (an API key counts as one).
 */
function mergeTarget(deps: ApiDeps, channel: Channel, data: Data, auth: AuthContext | null): Channel {
  const targetId = text(data, "target_call_id");
  if (targetId === undefined || targetId === "") throw fieldError("target_call_id", "required", "merge needs target_call_id: the uuid of your other call's leg");
  const target = deps.calls?.channels.inAccount(channel.accountId, targetId);
  if (!target) throw notFound(targetId);
  const admin = auth?.isAdmin === true;
  const mine = (leg: Channel) => auth !== null && auth.ownerId !== null && leg.identity.ownerId === auth.ownerId;
  if (!admin && !(mine(channel) && mine(target))) {
    throw new ApiError("forbidden", { target_call_id: { forbidden: { message: "only the user whose device has both legs (or an admin) may merge them" } } });
  }
  if (channel.identity.ownerId === undefined || target.identity.ownerId !== channel.identity.ownerId) {
    throw new ApiError("invalid_data", { target_call_id: { merge: { message: "both legs must be calls of one user's devices" } } });
  }
  return target;
}

/**
 * Commands change a call: an admin (an API key counts as one) may command any leg of the account,
 * another user only a call they are in, i.e. a leg of their devices or the leg bridged to one.
 */
async function mayCommand(deps: ApiDeps, channel: Channel, data: Data, auth: AuthContext | null): Promise<void> {
  if (auth?.isAdmin === true) return;
  const ownerId = auth?.ownerId ?? null;
  const mine = (leg: Channel | undefined) => ownerId !== null && leg?.identity.ownerId === ownerId;
  const other = channel.otherLeg === undefined ? undefined : deps.calls?.channels.inAccount(channel.accountId, channel.otherLeg);
  if (mine(channel) || mine(other)) return;
  // Call pickup: anyone may take a colleague's call to themselves (intercept to their own user or device).
  if (data.action === "intercept" && ownerId !== null && (await interceptsToSelf(deps, channel.accountId, data, ownerId))) return;
  throw new ApiError("forbidden", { uuid: { forbidden: { message: "only a call you are in (or an admin) may be commanded; anyone may intercept a call to themselves", value: channel.id } } });
}

async function interceptsToSelf(deps: ApiDeps, accountId: string, data: Data, ownerId: string): Promise<boolean> {
  const targetId = text(data, "target_id");
  if (targetId === undefined) return false;
  if (data.target_type === "user") return targetId === ownerId;
  const device = (await deps.collection(accountId, "devices")).get(targetId);
  return device?.data.owner_id === ownerId;
}

/** Runs the command; a refusal from the call engine is a 400 `invalid data` naming its field. */
async function command(deps: ApiDeps, channel: Channel, data: Data, auth: AuthContext | null): Promise<Outcome> {
  const action = data.action;
  if (action === undefined) throw fieldError("action", "required", `Field is required but missing: one of ${CHANNEL_ACTIONS.join(", ")}`);
  if (!isAction(action)) {
    throw new ApiError("invalid_data", { action: { enum: { message: `unknown channel action; use one of ${CHANNEL_ACTIONS.join(", ")}`, value: action } } });
  }
  const engine = deps.calls;
  if (!engine) throw new ApiError("invalid_data", { action: { unavailable: { message: "the call engine is not running", value: action } } });
  const commands = engine.commands;
  try {
    switch (action) {
      case "hangup":
        commands.hangup(channel);
        return accepted("hangup initiated");
      case "transfer":
        await commands.transfer(channel, transferRequest(data));
        return accepted("transfer initiated");
      case "break":
        commands.break(channel);
        return accepted("break initiated");
      case "callflow": {
        const id = text(data, "id");
        if (id === undefined || id === "") throw fieldError("id", "required", "the callflow action needs the id of a callflow");
        await commands.callflow(channel, id);
        return accepted("callflow initiated");
      }
      case "intercept":
        await commands.intercept(channel, interceptRequest(data));
        return accepted("intercept initiated");
      case "merge":
        commands.merge(channel, mergeTarget(deps, channel, data, auth));
        return accepted("merge initiated");
    }
  } catch (err) {
    if (err instanceof ChannelCommandError) throw new ApiError("invalid_data", { [err.field]: { [action]: { message: err.message } } });
    throw err;
  }
}

function accepted(message: string): Outcome {
  return { data: message, status: 202 };
}

export function registerChannels(app: FastifyInstance, deps: ApiDeps): void {
  const live = () => deps.calls?.channels;
  const accountOf = (ctx: Ctx) => ctx.params.account_id ?? "";

  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/channels",
    access: "account",
    tag: "channels",
    verbs: {
      GET: { summary: "List the account's live channels (call legs)", handler: async (ctx) => listOf(live()?.ofAccount(accountOf(ctx)) ?? [], ctx) },
    },
  });

  const ownerList =
    (collection: "users" | "devices"): Handler =>
    async (ctx) => {
      const accountId = accountOf(ctx);
      const id = ctx.params.id ?? "";
      if (!(await deps.collection(accountId, collection)).has(id)) throw notFound(id);
      const channels = collection === "users" ? live()?.ofUser(accountId, id) : live()?.ofDevice(accountId, id);
      return listOf(channels ?? [], ctx);
    };
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/users/:id/channels",
    access: "account",
    tag: "channels",
    verbs: { GET: { summary: "List the live channels of a user's devices", handler: ownerList("users") } },
  });
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/devices/:id/channels",
    access: "account",
    tag: "channels",
    verbs: { GET: { summary: "List the live channels of a device", handler: ownerList("devices") } },
  });

  const channelOf = (ctx: Ctx): Channel => {
    const uuid = ctx.params.uuid ?? "";
    const channel = live()?.inAccount(accountOf(ctx), uuid);
    if (!channel) throw notFound(uuid);
    return channel;
  };
  // The action sits in the envelope's data, or (as Kazoo also reads it) at the top of the
  // envelope or in the query string.
  const run: Handler = async (ctx) => {
    const data = dataObject(ctx);
    const action = data.action ?? ctx.req.envelope.action ?? ctx.req.query.action;
    const channel = channelOf(ctx);
    const asked = action === undefined ? data : { ...data, action };
    await mayCommand(deps, channel, asked, ctx.auth);
    return command(deps, channel, asked, ctx.auth);
  };
  registerEndpoint(app, deps, {
    path: "/v2/accounts/:account_id/channels/:uuid",
    access: "account",
    tag: "channels",
    verbs: {
      GET: { summary: "Details of one live channel", handler: async (ctx) => ({ data: channelDetail(channelOf(ctx), ctx.now.getTime()) }) },
      POST: { summary: "Run a command on a channel: transfer, hangup, break, callflow, intercept or merge", body: commandSchema, answers: [202], handler: run },
      PUT: { summary: "Run a command on a channel (as POST)", body: commandSchema, answers: [202], handler: run },
    },
  });
}
