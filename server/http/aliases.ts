// Paths other products' clients use for our resources. The call-queue API is the hosted
// Qubicle application renamed, and Qubicle's clients call `qubicle_queues` and
// `qubicle_recipients`: those paths are routed to `callq_queues` and `callq_recipients` before
// any route is looked up, so every verb, sub-path and permission is the same.
const ALIASES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(\/v2\/accounts\/[^/?#]+\/)qubicle_(queues|recipients)(?=[/?#]|$)/, "$1callq_$2"],
];

export function rewriteAliasedUrl(url: string): string {
  if (!url.includes("qubicle_")) return url;
  for (const [pattern, replacement] of ALIASES) if (pattern.test(url)) return url.replace(pattern, replacement);
  return url;
}
