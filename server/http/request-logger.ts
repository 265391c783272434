// The logger of one request (`request.log`), made by Fastify for every request: most requests
// log nothing, so the logger's child with the request's bindings (its id) is made at the first
// line written, not for every request (a pino child per request was measurable CPU per GET).
import type { FastifyBaseLogger } from "fastify";
import { serializers } from "fastify/lib/logger-pino.js";
import type { Bindings, ChildLoggerOptions } from "fastify/types/logger.js";

type LogFn = FastifyBaseLogger["info"];

export class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  /**
   * @param itself the parent itself rather than a child of it (appLogger's root: no bindings,
   *   no options)
   */
  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
    itself = false,
  ) {
    if (itself) this.#child = parent;
  }

  /** The child with the request's bindings, made once. */
  #logger(): FastifyBaseLogger {
    // A lazy parent is made real first (its child() would only make another lazy one).
    this.#child ??= (this.parent instanceof RequestLogger ? this.parent.#logger() : this.parent).child(this.bindings, this.options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.#logger().level = level;
  }

  fatal(...args: Parameters<LogFn>): void {
    this.#logger().fatal(...args);
  }

  error(...args: Parameters<LogFn>): void {
    this.#logger().error(...args);
  }

  warn(...args: Parameters<LogFn>): void {
    this.#logger().warn(...args);
  }

  info(...args: Parameters<LogFn>): void {
    this.#logger().info(...args);
  }

  debug(...args: Parameters<LogFn>): void {
    this.#logger().debug(...args);
  }

  trace(...args: Parameters<LogFn>): void {
    this.#logger().trace(...args);
  }

  silent(...args: Parameters<LogFn>): void {
    this.#logger().silent(...args);
  }

  /** A child made lazily too: Fastify asks the app's logger for one per request. */
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return new RequestLogger(this, bindings, options ?? {});
  }
}

/**
 * The app's logger (`app.log`, the parent of every request's): `logger` itself until a line is
 * written or a child asked, and children made lazily (RequestLogger). Made as Fastify makes its
 * own from a logger instance (ours had no serializers of its own to add): a child of it with
 * Fastify's serializers (req, res, err). Fastify is given no logger (server/http/app.ts), so it sets up no response
 * listeners per request; it is given a child factory over this one instead.
 */
export function appLogger(logger: FastifyBaseLogger): FastifyBaseLogger {
  return new RequestLogger(logger, {}, {}, true).child({}, { serializers: { ...serializers } });
}
