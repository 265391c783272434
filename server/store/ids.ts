// Document ids and revisions as the hosted service shapes them: 32 lowercase hex,
// MODB-style `YYYYMM-<32hex>` for recordings and CDRs, revisions `N-<32hex>`.
import type { RandomSource } from "../clock.js";

export const ID_PATTERN = /^[0-9a-f]{32}$/;
export const MODB_ID_PATTERN = /^[0-9]{6}-[0-9a-f]{32}$/;
export const REVISION_PATTERN = /^[0-9]+-[0-9a-f]{32}$/;

export function newId(random: RandomSource): string {
  return random.bytes(16).toString("hex");
}

export function newModbId(random: RandomSource, unixMs: number): string {
  const d = new Date(unixMs);
  const month = String(d.getUTCMonth() + 1).padStart(2, "0");
  return `${d.getUTCFullYear()}${month}-${newId(random)}`;
}

export function nextRevision(random: RandomSource, previous?: string): string {
  const n = previous ? Number.parseInt(previous.split("-")[0] ?? "0", 10) + 1 : 1;
  return `${n}-${newId(random)}`;
}
