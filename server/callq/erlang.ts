// Queueing estimates for staffing: Erlang C (M/M/n, callers never give up) and Erlang A (Palm's
// M/M/n+M, callers give up after an exponentially distributed patience). Pure functions of the
// traffic: an arrival rate, a mean handle time and, for Erlang A, a mean patience, all in seconds.
// They are estimates: real arrivals are not Poisson and real handle times are not exponential.

export interface Traffic {
  /** Calls per second. */
  arrivalRate: number;
  /** Mean handle time of a call, seconds. */
  handleTime: number;
}

export interface ImpatientTraffic extends Traffic {
  /** Mean time a caller waits before giving up, seconds. */
  patience: number;
}

/** The offered load in Erlangs: how many agents the calls would keep busy all the time. */
export function offeredLoad(traffic: Traffic): number {
  return traffic.arrivalRate * traffic.handleTime;
}

/**
 * Erlang B by its recursion B(k) = A·B(k−1) / (k + A·B(k−1)), which stays within [0, 1] for any
 * number of agents (the factorials of the textbook form overflow past about 170).
 */
export function erlangB(agents: number, load: number): number {
  let b = 1;
  for (let k = 1; k <= agents; k++) b = (load * b) / (k + load * b);
  return b;
}

/** Erlang C: the probability that a caller waits at all; 1 when the agents cannot keep up. */
export function erlangC(agents: number, load: number): number {
  if (load <= 0) return 0;
  if (agents <= load) return 1;
  const b = erlangB(agents, load);
  return (agents * b) / (agents - load * (1 - b));
}

/** Erlang C: the share of callers answered within `thresholdS` seconds (0 when overloaded). */
export function erlangCServiceLevel(agents: number, traffic: Traffic, thresholdS: number): number {
  const load = offeredLoad(traffic);
  if (load <= 0) return 1;
  if (agents <= load) return 0;
  return 1 - erlangC(agents, load) * Math.exp((-(agents - load) * thresholdS) / traffic.handleTime);
}

/** Erlang C: the average speed of answer over all callers, seconds (Infinity when overloaded). */
export function erlangCAsa(agents: number, traffic: Traffic): number {
  const load = offeredLoad(traffic);
  if (load <= 0) return 0;
  if (agents <= load) return Infinity;
  return (erlangC(agents, load) * traffic.handleTime) / (agents - load);
}

/** No queue needs more: a search that reaches it answers it (the target is out of reach). */
export const MAX_AGENTS = 10_000;

/** Erlang C: the fewest agents whose service level within `thresholdS` reaches `target` (0..1). */
export function erlangCAgents(traffic: Traffic, thresholdS: number, target: number): number {
  const load = offeredLoad(traffic);
  if (load <= 0) return 0;
  for (let n = Math.max(1, Math.floor(load) + 1); n < MAX_AGENTS; n++) if (erlangCServiceLevel(n, traffic, thresholdS) >= target) return n;
  return MAX_AGENTS;
}

export interface ErlangA {
  /** The probability that a caller finds every agent busy and waits. */
  waitProbability: number;
  /** The share of callers who give up before an agent answers. */
  abandonProbability: number;
  /** The share of all callers answered within the threshold. */
  serviceLevel: number;
  /** The average wait of all callers (answered or not), seconds. */
  averageWait: number;
}

/** The longest line Erlang A works out; a longer one means overload (see erlangA). */
const MAX_LINE = 5_000;
/** Tail terms of the distribution below this share of the total are left out. */
const NEGLIGIBLE = 1e-15;
/** Terms are rescaled past this size, so a large load cannot overflow. */
const RESCALE_ABOVE = 1e200;

/**
 * Erlang A (Palm's M/M/n+M) with `agents` agents: the birth–death chain of the number of callers
 * in the system (arrivals λ; k·μ departures while k ≤ n; n·μ + (k−n)·θ beyond, θ = 1/patience),
 * summed until its tail is negligible. Arrivals see its stationary distribution (PASTA); an
 * arrival with j callers ahead in line is answered within t with the probability that the line
 * moves j+1 places (each at rate n·μ + i·θ with i still ahead) before t and before their own
 * patience runs out, computed by uniformisation.
 */
export function erlangA(agents: number, traffic: ImpatientTraffic, thresholdS: number): ErlangA {
  const { arrivalRate: lambda } = traffic;
  const mu = 1 / traffic.handleTime;
  const theta = 1 / traffic.patience;
  if (lambda <= 0) return { waitProbability: 0, abandonProbability: 0, serviceLevel: 1, averageWait: 0 };
  // The line stops growing where giving up (k−n)·θ makes up for the arrivals the agents cannot
  // take. So far out (patience nearly unbounded, fewer agents than the load) the agents are
  // simply overloaded: everybody waits, and the calls they cannot take are lost to giving up.
  if ((lambda - agents * mu) / theta > MAX_LINE) {
    return { waitProbability: 1, abandonProbability: Math.max(0, 1 - (agents * mu) / lambda), serviceLevel: 0, averageWait: Infinity };
  }
  const weights: number[] = [1];
  let total = 1;
  let w = 1;
  for (let k = 1; ; k++) {
    const departures = k <= agents ? k * mu : agents * mu + (k - agents) * theta;
    w = (w * lambda) / departures;
    weights.push(w);
    total += w;
    if (w > RESCALE_ABOVE) {
      for (let i = 0; i < weights.length; i++) weights[i] = (weights[i] ?? 0) / w;
      total /= w;
      w = 1;
    }
    if (k > agents && w < NEGLIGIBLE * total) break;
  }
  const p = weights.map((x) => x / total);
  let waiting = 0;
  let queued = 0;
  let answeredAtOnce = 0;
  p.forEach((pk, k) => {
    if (k >= agents) {
      waiting += pk;
      queued += (k - agents) * pk;
    } else answeredAtOnce += pk;
  });
  const answeredLater = answeredWithin(agents * mu, theta, p.length - agents, thresholdS);
  let serviceLevel = answeredAtOnce;
  for (let j = 0; j < answeredLater.length; j++) serviceLevel += (p[agents + j] ?? 0) * (answeredLater[j] ?? 0);
  return { waitProbability: waiting, abandonProbability: (theta * queued) / lambda, serviceLevel, averageWait: queued / lambda };
}

/**
 * For j = 0..ahead−1 callers ahead in line: the probability of being answered within `t` seconds,
 * when the line moves at `serviceRate` + i·θ with i callers ahead and one's own patience ends at
 * rate θ. Uniformised at rate Λ: f_m(j) is the probability of being answered within m jumps;
 * the answer is Σ_m Poisson(Λt)(m)·f_m(j).
 */
function answeredWithin(serviceRate: number, theta: number, ahead: number, t: number): number[] {
  if (ahead <= 0) return [];
  const rate = serviceRate + ahead * theta + theta;
  const x = rate * t;
  const steps = Math.ceil(x + 12 * Math.sqrt(x) + 30);
  let f = new Array<number>(ahead).fill(0);
  const out = new Array<number>(ahead).fill(0);
  let logPoisson = -x;
  for (let m = 0; m <= steps; m++) {
    if (m > 0) {
      logPoisson += Math.log(x) - Math.log(m);
      const next = new Array<number>(ahead);
      for (let j = 0; j < ahead; j++) {
        const move = serviceRate + j * theta;
        const stay = 1 - (move + theta) / rate;
        next[j] = (move / rate) * (j === 0 ? 1 : (f[j - 1] ?? 0)) + stay * (f[j] ?? 0);
      }
      f = next;
    }
    const weight = Math.exp(logPoisson);
    for (let j = 0; j < ahead; j++) out[j] = (out[j] ?? 0) + weight * (f[j] ?? 0);
  }
  return out;
}

/** Erlang A: the fewest agents whose service level within `thresholdS` reaches `target` (0..1). */
export function erlangAAgents(traffic: ImpatientTraffic, thresholdS: number, target: number): number {
  if (traffic.arrivalRate <= 0) return 0;
  // Erlang C's answer is an upper bound: callers giving up shorten the line for the others.
  const upper = Math.min(MAX_AGENTS, erlangCAgents(traffic, thresholdS, target));
  let low = 1;
  let high = upper;
  if (erlangA(high, traffic, thresholdS).serviceLevel < target) return upper;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (erlangA(mid, traffic, thresholdS).serviceLevel >= target) high = mid;
    else low = mid + 1;
  }
  return low;
}
