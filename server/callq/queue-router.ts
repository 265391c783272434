// The four routers: given the recipients who could take a session now, which one is offered it.
// Pure functions of the candidates and the queue's round memory, so they are unit-tested alone.

export const ROUTERS = ["route_round_robin", "route_least_calls", "route_least_offers", "route_most_idle"] as const;
export type RouterName = (typeof ROUTERS)[number];

export interface Candidate {
  id: string;
  /** Calls handled (stats.total_calls). */
  totalCalls: number;
  /** Offers made to the recipient (any queue). */
  offers: number;
  /** Unix ms since when the recipient is idle: their last handled call, else their login. */
  idleSince: number;
}

/** Per queue: who has been offered a session in the current round (route_round_robin). */
export class RoundMemory {
  readonly #offered = new Set<string>();

  has(id: string): boolean {
    return this.#offered.has(id);
  }

  mark(id: string): void {
    this.#offered.add(id);
  }

  newRound(): void {
    this.#offered.clear();
  }
}

/**
 * Picks the recipient to offer to, or undefined when there is no candidate. `candidates` come in
 * the queue's member order. Round robin marks the chosen one in `round`: each member is offered
 * once per round, whatever the outcome, and a round starts again once everyone available had a turn.
 */
export function pickRecipient(router: RouterName, candidates: readonly Candidate[], round: RoundMemory): string | undefined {
  if (candidates.length === 0) return undefined;
  switch (router) {
    case "route_round_robin": {
      let next = candidates.find((c) => !round.has(c.id));
      if (!next) {
        round.newRound();
        next = candidates[0];
      }
      if (next) round.mark(next.id);
      return next?.id;
    }
    case "route_least_calls":
      return best(candidates, (c) => c.totalCalls);
    case "route_least_offers":
      return best(candidates, (c) => c.offers);
    case "route_most_idle":
      return best(candidates, (c) => c.idleSince);
  }
}

/** The candidate with the lowest `metric`; ties go to the longest idle, then the member order. */
function best(candidates: readonly Candidate[], metric: (c: Candidate) => number): string | undefined {
  let chosen: Candidate | undefined;
  for (const c of candidates) {
    if (!chosen) chosen = c;
    else {
      const a = metric(c);
      const b = metric(chosen);
      if (a < b || (a === b && c.idleSince < chosen.idleSince)) chosen = c;
    }
  }
  return chosen?.id;
}
