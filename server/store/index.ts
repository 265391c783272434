// The store's public face: everything above store/ imports from here.
export { Store, collectionIfOpen, type StoreOptions, type StoreChange, type ChangeListener } from "./store.js";
export { Collection, type StoredDoc, type DocData, type AttachmentMeta, type CreateOptions, type WriteOptions, type ChangeKind } from "./collection.js";
export { StoreConflictError, StoreNotFoundError, StoreUniqueError } from "./errors.js";
export { type EqualityIndexSpec, type SortKey, type WalkOptions } from "./list-order.js";
export { blockMemo, type EntryVisit, type OrderedEntry, type PlacedPage, type PlacedRun } from "./ordered-list.js";
export { drawFree, UniqueIndex, type UniqueIndexSpec, type Clash } from "./unique-index.js";
export { ID_PATTERN, MODB_ID_PATTERN, REVISION_PATTERN, newId } from "./ids.js";
