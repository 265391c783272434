// The logger of one request (`request.log`), made by Fastify for every request: most requests
// log nothing, so the logger's child with the request's bindings (its id) is made at the first
// line written, not for every request (a pino child per request was measurable CPU per GET).
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions } from "fastify/types/logger.js";

type LogFn = FastifyBaseLogger["info"];

export class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  /**
   * @param itself the parent itself rather than a child of it (lazyChildren's root: no bindings,
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
 * The logger handed to Fastify (`loggerInstance`): `logger` itself until a child is asked, and
 * children made lazily (RequestLogger). Fastify makes the app's logger as a child of it with its
 * serializers, then one child of that per request with the request's id, through its own default
 * factory: a custom `childLoggerFactory` would also have Fastify check the child's seven methods on
 * every request (`validateLogger`).
 */
export function lazyChildren(logger: FastifyBaseLogger): FastifyBaseLogger {
  return new RequestLogger(logger, {}, {}, true);
}
