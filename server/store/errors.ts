// The store's own failures; the HTTP layer maps them onto the error catalogue.

export class StoreNotFoundError extends Error {
  constructor(readonly docId: string) {
    super(`no document ${docId}`);
    this.name = "StoreNotFoundError";
  }
}

export class StoreConflictError extends Error {
  constructor(
    readonly docId: string,
    reason: string,
  ) {
    super(`conflict on ${docId}: ${reason}`);
    this.name = "StoreConflictError";
  }
}

/** A write would give a document a key of a unique index that another document holds. */
export class StoreUniqueError extends Error {
  constructor(
    readonly field: string,
    readonly description: string,
    readonly key: string,
    readonly holder: string,
  ) {
    super(`${field} ${JSON.stringify(key)} is held by ${holder}`);
    this.name = "StoreUniqueError";
  }
}
