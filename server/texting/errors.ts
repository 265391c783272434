// The texting API's failures: HTTP 400 with `{errors: [<message>, ...]}` (one message per
// problem), 401 `{errors:["Unauthorized"]}`; not the platform's envelope.

export class TextingError extends Error {
  override name = "TextingError";

  constructor(
    readonly errors: readonly string[],
    readonly status = 400,
  ) {
    super(errors.join("; "));
  }
}

export const UNAUTHORIZED = "Unauthorized";

export function unauthorized(): TextingError {
  return new TextingError([UNAUTHORIZED], 401);
}

export function missingParameter(name: string): string {
  return `Missing parameter '${name}'`;
}

export function invalidPhoneNumber(value: unknown): string {
  return `Invalid phone number '${typeof value === "string" ? value : JSON.stringify(value)}'`;
}

export function invalidParameter(name: string, why: string): string {
  return `Invalid parameter '${name}': ${why}`;
}

export function contactNotFound(id: string): TextingError {
  return new TextingError([`Contact '${id}' not found`]);
}

/** Collects one message per problem, so a request learns everything wrong with it at once. */
export class Problems {
  readonly #messages: string[] = [];

  add(message: string): void {
    this.#messages.push(message);
  }

  get empty(): boolean {
    return this.#messages.length === 0;
  }

  /** Throws the 400 when anything was found. */
  check(): void {
    if (this.#messages.length > 0) throw new TextingError(this.#messages);
  }
}
