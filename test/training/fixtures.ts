// Scenarios the training tests share, built in full (the API's defaults are its own test's).
import type { Persona, Scenario } from "../../server/training/index.js";

export function persona(overrides: Partial<Persona> = {}): Persona {
  return {
    name: "Caller",
    weight: 1,
    number: "+1415555####",
    language: "en-US",
    lines: [{ text: "Hello, I have a question about my bill." }],
    patience: { distribution: "exponential", mean_s: 90 },
    abandons: true,
    asks_for_supervisor: false,
    texts_instead: false,
    ...overrides,
  };
}

export function scenario(overrides: Partial<Scenario> = {}): Scenario {
  return {
    name: "Monday morning",
    duration_s: 3600,
    seed: 7,
    queues: [{ number: "+14155550100", name: "Support", rate_per_hour: 120 }],
    personas: [persona()],
    targets: { service_level: { answered_within_s: 20, percent: 80 }, handle_time_s: 300 },
    faults: [],
    agents: { count: 4, ring_delay_s: 3, handle_time: { distribution: "exponential", mean_s: 120 }, wrapup_s: 10 },
    ...overrides,
  };
}
