// PATCH as the hosted API does it: merge the partial `data` into the stored document, then
// validate the result as a whole. Objects merge key by key; `null` removes a key; arrays and
// scalars replace.
import { isObject } from "./request.js";

export function mergePatch(target: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...target };
  for (const [key, value] of Object.entries(patch)) {
    if (key === "__proto__" || key === "constructor" || key === "prototype") continue;
    if (value === null) delete out[key];
    else if (isObject(value) && isObject(out[key])) out[key] = mergePatch(out[key] as Record<string, unknown>, value);
    else out[key] = value;
  }
  return out;
}
