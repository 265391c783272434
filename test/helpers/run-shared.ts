// One resource for a whole vitest run that several projects' globalSetup files name: the first
// setup makes it, the others share it, the last teardown releases it. The count lives on the main
// process's globalThis under a registered symbol, so it holds whichever copy of a setup module
// vitest loaded for each project. The resource is handed to the test files (forked after the
// setups) as one environment variable.

interface Shared<T> {
  value: Promise<T>;
  users: number;
}

export interface RunShared {
  /** Whether some setup of this run made the resource (and no last teardown has released it yet). */
  readonly active: boolean;
  setup(): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * The setup and teardown of a run-wide resource: `make` makes it, `env` is the variable that names
 * it to the files (`describe` turns it into that text), `release` ends it.
 */
export function runShared<T>(key: string, env: string, resource: { make(): Promise<T>; describe(value: T): string; release(value: T): Promise<void> }): RunShared {
  const symbol = Symbol.for(key);
  const holder = globalThis as { [k: symbol]: Shared<T> | undefined };
  return {
    get active() {
      return holder[symbol] !== undefined;
    },
    async setup() {
      const shared = (holder[symbol] ??= { value: resource.make(), users: 0 });
      shared.users += 1;
      process.env[env] = resource.describe(await shared.value);
    },
    async teardown() {
      const shared = holder[symbol];
      if (shared === undefined) return;
      shared.users -= 1;
      if (shared.users > 0) return;
      holder[symbol] = undefined;
      delete process.env[env];
      await resource.release(await shared.value);
    },
  };
}
