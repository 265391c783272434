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
