// The presence words are written three times: the server's directory (server/api/directory.ts),
// its AsyncAPI enum (events/ cannot import api/) and the console's copy (renderer/api/directory.ts,
// since the renderer never imports server code). These tests hold the copies equal to the
// server's list, so a presence added on one side fails here, not on a colleague's screen.
import { describe, expect, it } from "vitest";
import * as consoleDirectory from "../../renderer/api/directory.js";
import { PRESENCES } from "../../server/api/directory.js";
import { EVENT_MESSAGES } from "../../server/events/asyncapi.js";

const sorted = (list: readonly string[]): string[] => [...list].sort();

describe("the presence lists", () => {
  it("the console knows every presence the server reports, and no other", () => {
    expect(sorted(consoleDirectory.PRESENCES)).toEqual(sorted(PRESENCES));
  });

  it("the AsyncAPI document's directory event names the same presences", () => {
    const payload = EVENT_MESSAGES.directoryEvent?.payload as { properties: { data: { properties: { presence: { enum: string[] } } } } };
    expect(sorted(payload.properties.data.properties.presence.enum)).toEqual(sorted(PRESENCES));
  });

  it("the console reads an unknown presence from a newer server as offline", () => {
    expect(consoleDirectory.colleagueOf({ id: "x", name: "X", presence: "on_holiday" }).presence).toBe("offline");
  });
});
