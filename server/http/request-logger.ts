// The logger of one request (`request.log`), made by Fastify for every request: most requests
// log nothing, so the logger's child with the request's bindings (its id) is made at the first
// line written, not for every request (a pino child per request was measurable CPU per GET).
import type { FastifyBaseLogger } from "fastify";
import type { Bindings, ChildLoggerOptions } from "fastify/types/logger.js";

type LogFn = FastifyBaseLogger["info"];

export class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  /** The child with the request's bindings, made once. */
  #logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options);
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

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options);
  }
}
