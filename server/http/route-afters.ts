// Fastify queues one Avvio `after` per route it registers (fastify/lib/route.js): a Plugin with a
// queue of its own, loaded a tick later, whose callback copies the scope's error handler, body
// limit, log level and serializers onto the route's context and registers a `preReady` listener
// for its hooks. With some 230 routes that bookkeeping was the largest part of a start's route
// building (issue 17, "Start": 300 routes to `ready` took ~175 ms of CPU with one `after` each and
// ~85 ms with them coalesced, plain Fastify 5). Here the `after`s of routes declared one after
// another on one scope, with nothing else queued on Avvio between them, become one `after` that
// runs their callbacks in order, at the place in Avvio's queue where the first one stood: each
// callback still reads its scope's state when Avvio reaches that place, as before (an error
// handler or hook added later in the same plug-in still counts), and nothing else ran between
// them before either (consecutive entries of one queue). Any other `after`, any `register` and a
// route on another scope close the batch, so the order of everything in Avvio's queue is kept.
import type { FastifyInstance } from "fastify";

type Done = (err?: Error | null) => void;
type AfterCallback = (err: Error | null | undefined, done: Done) => void;

/** The two methods Avvio exposes on the app (and its scopes inherit), as called here. */
interface AvvioMethods {
  after(this: FastifyInstance, fn?: unknown): unknown;
  register(this: FastifyInstance, ...args: unknown[]): unknown;
}

interface Batch {
  scope: FastifyInstance;
  callbacks: AfterCallback[];
  started: boolean;
}

/**
 * Coalesces the per-route `after`s of `app` and of every scope registered on it afterwards. Call it
 * on a new app, before any route or plug-in. A route is known by its `onRoute` hook (Fastify runs
 * the route's `onRoute` hooks, then queues its `after`, with no other Avvio call between).
 */
export function coalesceRouteAfters(app: FastifyInstance): void {
  const methods = app as unknown as AvvioMethods;
  const after = methods.after;
  const register = methods.register;
  let routeAfterNext = false;
  let open: Batch | null = null;
  app.addHook("onRoute", () => {
    routeAfterNext = true;
  });
  methods.after = function (this: FastifyInstance, fn?: unknown) {
    const ofRoute = routeAfterNext;
    routeAfterNext = false;
    if (!ofRoute || typeof fn !== "function") {
      open = null;
      return after.call(this, fn);
    }
    const callback = fn as AfterCallback;
    if (open !== null && open.scope === this && !open.started) {
      open.callbacks.push(callback);
      return this;
    }
    const batch: Batch = { scope: this, callbacks: [callback], started: false };
    open = batch;
    return after.call(this, (err: Error | null | undefined, done: Done) => {
      batch.started = true;
      if (open === batch) open = null;
      let next = 0;
      const step: Done = (e) => {
        const cb = batch.callbacks[next++];
        if (cb === undefined) done(e);
        else cb(e, step);
      };
      step(err);
    });
  };
  methods.register = function (this: FastifyInstance, ...args: unknown[]) {
    open = null;
    routeAfterNext = false;
    return register.apply(this, args);
  };
}
