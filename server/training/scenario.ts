// A training scenario: what a trainer's shift holds (how callers arrive at each queue or number,
// who they are and how they behave, the simulated agents around the trainees, the targets and the
// faults on cue) and the seed every draw comes from. The document's JSON is also its file format:
// an export is these fields with `format` added, and an import takes that file back.

import { FAULT_KINDS, type FaultKind } from "../../contract/training.js";

/** Seconds drawn from a distribution: each kind reads the parameters it names. */
export interface Distribution {
  /**
   * fixed: mean_s. exponential: mean_s. uniform: min_s..max_s. normal and lognormal: mean_s and
   * sd_s of the distribution itself. min_s and max_s clamp every kind's draws.
   */
  distribution: DistributionKind;
  mean_s?: number;
  sd_s?: number;
  min_s?: number;
  max_s?: number;
}

export const DISTRIBUTION_KINDS = ["fixed", "exponential", "uniform", "normal", "lognormal"] as const;
export type DistributionKind = (typeof DISTRIBUTION_KINDS)[number];

/** Between from_s and to_s of the run, the queue's base rate is multiplied by `multiplier`. */
export interface ProfileInterval {
  from_s: number;
  to_s: number;
  multiplier: number;
}

/** `count` callers more, arriving uniformly within `within_s` from `at_s`. */
export interface Burst {
  at_s: number;
  count: number;
  within_s: number;
}

/** Where callers arrive: a call queue of the account, or a number they dial. */
export interface ScenarioQueue {
  queue_id?: string;
  number?: string;
  name?: string;
  /** Callers per hour outside the profile's intervals (multiplier 1). */
  rate_per_hour: number;
  /** Where its personas who text instead send their text: a texting number of the account (the dialled number unless given). */
  texting_number?: string;
  profile?: ProfileInterval[];
  bursts?: Burst[];
}

export interface PersonaLine {
  text?: string;
  media_id?: string;
}

export interface Persona {
  /** The caller id name the caller presents. */
  name: string;
  /** The persona's share of callers, relative to the others' weights. */
  weight: number;
  /** The caller id number; each `#` is a random digit. */
  number: string;
  language: string;
  lines: PersonaLine[];
  /** How long they wait before they hang up, when they abandon. */
  patience: Distribution;
  abandons: boolean;
  /** What they press when a prompt asks for digits. */
  digits?: string;
  /** How long they talk once answered; without it they talk until the agent ends the call. */
  talk_time?: Distribution;
  asks_for_supervisor: boolean;
  /** They send a text instead of calling. */
  texts_instead: boolean;
}

export interface Targets {
  service_level: { answered_within_s: number; percent: number };
  handle_time_s: number;
  /** Seconds from a persona's text to the trainee's first reply; no target unless given. */
  text_response_s?: number;
}

// The fault kinds are the API's contract, one list for the server and the console.
export { FAULT_KINDS, type FaultKind };

export const ONE_WAY_DIRECTIONS = ["to_agent", "from_agent"] as const;
export type OneWayDirection = (typeof ONE_WAY_DIRECTIONS)[number];

export interface Fault {
  at_s: number;
  kind: FaultKind;
  /**
   * Whom or what it hits: a trainee (user id; one_way_audio also takes a username), a queue key,
   * a texting number, a persona's name or number (text_undelivered).
   */
  target?: string;
  /** burst: how many callers arrive at once. text_undelivered: how many texts fail. */
  count?: number;
  /** webhook_failure, one_way_audio, text_undelivered: how long it lasts, in run seconds (60 unless given). */
  duration_s?: number;
  /** one_way_audio: the way the audio stops, to the trainee or from them (to_agent unless given). */
  direction?: OneWayDirection;
}

/** Bot recipients that log in Ready, answer after a ring, talk and wrap up. */
export interface SimulatedAgents {
  count: number;
  ring_delay_s: number;
  handle_time: Distribution;
  wrapup_s: number;
}

export interface Scenario {
  name: string;
  description?: string;
  duration_s: number;
  seed: number;
  queues: ScenarioQueue[];
  personas: Persona[];
  targets: Targets;
  faults: Fault[];
  agents: SimulatedAgents;
}

/** The `format` of an exported scenario file. */
export const SCENARIO_FILE_FORMAT = "switchboard.training_scenario.v1";

export const LIMITS = {
  durationS: 86_400,
  queues: 20,
  personas: 50,
  agents: 200,
  ratePerHour: 10_000,
  burstCount: 1_000,
  faults: 200,
  profileIntervals: 96,
} as const;

const seconds = (max: number, description?: string) => ({ type: "number", minimum: 0, maximum: max, ...(description ? { description } : {}) });

const distributionSchema = {
  type: "object",
  required: ["distribution"],
  additionalProperties: false,
  description: "seconds drawn from a distribution: fixed and exponential read mean_s, uniform min_s..max_s, normal and lognormal mean_s and sd_s; min_s and max_s clamp any kind",
  properties: {
    distribution: { type: "string", enum: [...DISTRIBUTION_KINDS] },
    mean_s: seconds(86_400),
    sd_s: seconds(86_400),
    min_s: seconds(86_400),
    max_s: seconds(86_400),
  },
};

/** The stored document's schema (the API validates every write with it; OpenAPI shows it). */
export const scenarioSchema: Record<string, unknown> = {
  type: "object",
  required: ["name", "duration_s", "seed", "queues", "personas"],
  description: "local addition: a training scenario (issue 18); the same fields, with format, are its shareable file",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 128 },
    description: { type: "string", maxLength: 2000 },
    duration_s: { type: "integer", minimum: 60, maximum: LIMITS.durationS, description: "how long callers keep arriving" },
    seed: { type: "integer", minimum: 0, maximum: 4294967295, description: "every draw of a run comes from it: the same seed gives the same callers" },
    queues: {
      type: "array",
      minItems: 1,
      maxItems: LIMITS.queues,
      items: {
        type: "object",
        required: ["rate_per_hour"],
        additionalProperties: false,
        description: "arrivals at a call queue (queue_id) or a dialled number: a Poisson process at rate_per_hour times the profile's multiplier, plus bursts",
        properties: {
          queue_id: { type: "string", pattern: "^[0-9a-f]{32}$" },
          number: { type: "string", pattern: "^\\+?[0-9]{2,20}$" },
          name: { type: "string", minLength: 1, maxLength: 128 },
          rate_per_hour: { type: "number", minimum: 0, maximum: LIMITS.ratePerHour },
          texting_number: { type: "string", pattern: "^\\+[0-9]{8,15}$", description: "where this queue's personas who text instead send their text (a texting number of the account); the dialled number unless given" },
          profile: {
            type: "array",
            maxItems: LIMITS.profileIntervals,
            items: {
              type: "object",
              required: ["from_s", "to_s", "multiplier"],
              additionalProperties: false,
              properties: { from_s: seconds(LIMITS.durationS), to_s: seconds(LIMITS.durationS), multiplier: { type: "number", minimum: 0, maximum: 100 } },
            },
          },
          bursts: {
            type: "array",
            maxItems: 100,
            items: {
              type: "object",
              required: ["at_s", "count"],
              additionalProperties: false,
              properties: { at_s: seconds(LIMITS.durationS), count: { type: "integer", minimum: 1, maximum: LIMITS.burstCount }, within_s: seconds(3600) },
            },
          },
        },
      },
    },
    personas: {
      type: "array",
      minItems: 1,
      maxItems: LIMITS.personas,
      items: {
        type: "object",
        required: ["name", "weight", "number", "patience"],
        additionalProperties: false,
        properties: {
          name: { type: "string", minLength: 1, maxLength: 128 },
          weight: { type: "number", minimum: 0, maximum: 1_000_000, description: "the persona's share of callers against the others' weights; 0 leaves it out" },
          number: { type: "string", pattern: "^\\+?[0-9#]{2,20}$", description: "each # is a random digit" },
          language: { type: "string", pattern: "^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$" },
          lines: {
            type: "array",
            maxItems: 50,
            items: {
              type: "object",
              additionalProperties: false,
              properties: { text: { type: "string", minLength: 1, maxLength: 1000 }, media_id: { type: "string", pattern: "^[0-9a-f]{32}$" } },
            },
          },
          patience: distributionSchema,
          abandons: { type: "boolean" },
          digits: { type: "string", pattern: "^[0-9*#]{1,32}$" },
          talk_time: distributionSchema,
          asks_for_supervisor: { type: "boolean" },
          texts_instead: { type: "boolean" },
        },
      },
    },
    targets: {
      type: "object",
      required: ["service_level", "handle_time_s"],
      additionalProperties: false,
      properties: {
        service_level: {
          type: "object",
          required: ["answered_within_s", "percent"],
          additionalProperties: false,
          properties: { answered_within_s: seconds(3600), percent: { type: "number", minimum: 0, maximum: 100 } },
        },
        handle_time_s: seconds(86_400),
        text_response_s: { ...seconds(86_400), description: "a persona's text answered within this many seconds (the trainee's first reply to its number); no target unless given" },
      },
    },
    faults: {
      type: "array",
      maxItems: LIMITS.faults,
      items: {
        type: "object",
        required: ["at_s", "kind"],
        additionalProperties: false,
        properties: {
          at_s: seconds(LIMITS.durationS),
          kind: { type: "string", enum: [...FAULT_KINDS] },
          target: { type: "string", minLength: 1, maxLength: 128 },
          count: { type: "integer", minimum: 1, maximum: LIMITS.burstCount },
          duration_s: { type: "number", minimum: 1, maximum: 3600, description: "webhook_failure, one_way_audio, text_undelivered: how long the fault lasts in run seconds (60 s unless given; text_undelivered with a count alone lasts until that many texts failed)" },
          direction: { type: "string", enum: [...ONE_WAY_DIRECTIONS], description: "one_way_audio: to_agent (the trainee hears nothing; the default) or from_agent (nobody hears the trainee)" },
        },
      },
    },
    agents: {
      type: "object",
      required: ["count"],
      additionalProperties: false,
      description: "simulated agents: they log in Ready, answer after ring_delay_s, end the call after a handle_time draw (or when the caller does) and wrap up for wrapup_s",
      properties: {
        count: { type: "integer", minimum: 0, maximum: LIMITS.agents },
        ring_delay_s: seconds(120),
        handle_time: distributionSchema,
        wrapup_s: seconds(3600),
      },
    },
  },
};

/** What the API fills in when a write leaves it out. */
export function withDefaults(data: Record<string, unknown>): Record<string, unknown> {
  const personas = Array.isArray(data.personas)
    ? data.personas.map((p: unknown) => (isRecord(p) ? { language: "en-US", lines: [], abandons: true, asks_for_supervisor: false, texts_instead: false, ...p } : p))
    : data.personas;
  const agents = isRecord(data.agents) ? { ring_delay_s: 3, handle_time: { distribution: "exponential", mean_s: 180 }, wrapup_s: 10, ...data.agents } : (data.agents ?? { count: 0, ring_delay_s: 3, handle_time: { distribution: "exponential", mean_s: 180 }, wrapup_s: 10 });
  return {
    targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 300 },
    faults: [],
    ...data,
    personas,
    agents,
  };
}

export interface Problem {
  /** The dotted field, as validation errors name it. */
  field: string;
  rule: string;
  message: string;
  value?: unknown;
}

/** The checks a schema cannot express, on a document the schema accepted. */
export function scenarioProblems(s: Scenario): Problem[] {
  const problems: Problem[] = [];
  const keys = new Set<string>();
  s.queues.forEach((q, i) => {
    const key = queueKey(q);
    if (key === undefined) problems.push({ field: `queues.${i}`, rule: "required", message: "a queue names a queue_id or a number" });
    else if (keys.has(key)) problems.push({ field: `queues.${i}`, rule: "unique", message: "two entries name the same queue or number", value: key });
    else keys.add(key);
    const intervals = [...(q.profile ?? [])].map((p, j) => ({ ...p, j })).sort((a, b) => a.from_s - b.from_s);
    let end = 0;
    for (const p of intervals) {
      if (p.to_s <= p.from_s) problems.push({ field: `queues.${i}.profile.${p.j}.to_s`, rule: "minimum", message: "an interval ends after it starts", value: p.to_s });
      else if (p.to_s > s.duration_s) problems.push({ field: `queues.${i}.profile.${p.j}.to_s`, rule: "maximum", message: "an interval ends within duration_s", value: p.to_s });
      else if (p.from_s < end) problems.push({ field: `queues.${i}.profile.${p.j}.from_s`, rule: "overlap", message: "intervals of a profile do not overlap", value: p.from_s });
      end = Math.max(end, p.to_s);
    }
    (q.bursts ?? []).forEach((b, j) => {
      if (b.at_s >= s.duration_s) problems.push({ field: `queues.${i}.bursts.${j}.at_s`, rule: "maximum", message: "a burst starts within duration_s", value: b.at_s });
    });
  });
  if (!s.personas.some((p) => p.weight > 0)) problems.push({ field: "personas", rule: "weight", message: "at least one persona has a weight above 0" });
  s.personas.forEach((p, i) => {
    problems.push(...distributionProblems(p.patience, `personas.${i}.patience`));
    if (p.talk_time) problems.push(...distributionProblems(p.talk_time, `personas.${i}.talk_time`));
  });
  problems.push(...distributionProblems(s.agents.handle_time, "agents.handle_time"));
  s.faults.forEach((f, i) => {
    if (f.at_s >= s.duration_s) problems.push({ field: `faults.${i}.at_s`, rule: "maximum", message: "a fault comes within duration_s", value: f.at_s });
    if (f.kind === "burst" && f.count === undefined) problems.push({ field: `faults.${i}.count`, rule: "required", message: "a burst says how many callers arrive" });
    if ((f.kind === "one_way_audio" || f.kind === "text_undelivered") && f.target === undefined) problems.push({ field: `faults.${i}.target`, rule: "required", message: f.kind === "one_way_audio" ? "one_way_audio names the trainee (a username or user id)" : "text_undelivered names a persona (its name) or a number" });
    if (f.kind === "burst" && f.target !== undefined && !keys.has(f.target)) problems.push({ field: `faults.${i}.target`, rule: "enum", message: "a burst's target is one of the scenario's queues (queue_id or number)", value: f.target });
  });
  return problems;
}

function distributionProblems(d: Distribution, field: string): Problem[] {
  const need = (name: "mean_s" | "sd_s" | "min_s" | "max_s"): Problem[] => (d[name] === undefined ? [{ field: `${field}.${name}`, rule: "required", message: `a ${d.distribution} distribution needs ${name}` }] : []);
  const out: Problem[] = [];
  switch (d.distribution) {
    case "fixed":
    case "exponential":
      out.push(...need("mean_s"));
      break;
    case "uniform":
      out.push(...need("min_s"), ...need("max_s"));
      break;
    case "normal":
    case "lognormal":
      out.push(...need("mean_s"), ...need("sd_s"));
      if (d.distribution === "lognormal" && d.mean_s === 0) out.push({ field: `${field}.mean_s`, rule: "exclusiveMinimum", message: "a lognormal mean is above 0", value: 0 });
      break;
  }
  if (d.min_s !== undefined && d.max_s !== undefined && d.max_s < d.min_s) out.push({ field: `${field}.max_s`, rule: "minimum", message: "max_s is at least min_s", value: d.max_s });
  return out;
}

/** How a scenario names a queue in its records: the queue id, else the number. */
export function queueKey(q: ScenarioQueue): string | undefined {
  return q.queue_id ?? q.number;
}

/** The callers a run is expected to hold: the rates over the profile, the bursts and the burst faults. */
export function expectedCallers(s: Scenario): number {
  let total = 0;
  for (const q of s.queues) {
    total += (q.rate_per_hour / 3600) * multipliedSeconds(q, s.duration_s);
    for (const b of q.bursts ?? []) total += b.count;
  }
  for (const f of s.faults) if (f.kind === "burst") total += f.count ?? 0;
  return total;
}

/** The integral of the profile's multiplier over the run, in seconds. */
export function multipliedSeconds(q: ScenarioQueue, durationS: number): number {
  let covered = 0;
  let weighted = 0;
  for (const p of q.profile ?? []) {
    const from = Math.min(p.from_s, durationS);
    const to = Math.min(p.to_s, durationS);
    covered += to - from;
    weighted += (to - from) * p.multiplier;
  }
  return weighted + (durationS - covered);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
