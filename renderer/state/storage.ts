// The key-value storage the slices persist through (localStorage in the app, a fake in tests),
// and safe JSON reads and writes over it that never throw at the user.

export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function memoryStorage(): KeyValueStorage {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

export function readStored(storage: KeyValueStorage, key: string): unknown {
  try {
    const text = storage.getItem(key);
    return text === null ? null : (JSON.parse(text) as unknown);
  } catch {
    // Corrupt or inaccessible storage means "nothing remembered", not a broken console.
    return null;
  }
}

export function writeStored(storage: KeyValueStorage, key: string, value: unknown): void {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    // A full or disabled storage only costs the convenience of remembering.
  }
}
