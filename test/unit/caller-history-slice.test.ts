// The caller history slice through the whole store, with a fake caller history API: a number's
// history read with the call's queue, a refusal shown with the history kept, and a new session
// starting empty with an answer meant for the old one dropped.
import { describe, expect, it } from "vitest";
import type { CallerHistory, CallerHistoryApi } from "../../renderer/api/caller-history.js";
import type { PlatformApi } from "../../renderer/api/platform.js";
import { consoleStore, deferred } from "../helpers/console-store.js";

const platform: PlatformApi = {
  user: async (id) => ({ id, username: "agent1", firstName: "Alex", lastName: "Agent", isAdmin: false, canMonitor: false, isTrainer: false, presenceId: "1002" }),
  devicesOf: async () => [],
  sipCredentials: async () => ({ username: "u", password: "p", realm: "r" }),
  directory: async () => [],
  recentCalls: async () => [],
  liveCallIds: async () => [],
  transfer: async () => undefined,
  merge: async () => undefined,
};

const HISTORY: CallerHistory = {
  number: "+14155550100",
  name: "Casey Customer",
  calls: [{ interactionId: "i-1", at: 0, durationS: 60, direction: "inbound", agents: ["Alex Agent"], dispositionCode: "sale", dispositionLabel: "Sale", note: "blue one", recordingIds: ["r1"] }],
  crmLink: "https://crm.example/?q=%2B14155550100",
};

function fixture() {
  const asked: { token: string; number: string; queueId?: string }[] = [];
  let answer: () => Promise<CallerHistory> = async () => HISTORY;
  const { store, signIn } = consoleStore({
    platform: () => platform,
    eventStream: () => ({ lastSeq: null, start: () => undefined, stop: () => undefined, reconnectNow: () => undefined }),
    callerHistoryApi: (options): CallerHistoryApi => ({
      history: async (number, queueId) => {
        asked.push({ token: options.token ?? "", number, ...(queueId === undefined ? {} : { queueId }) });
        return answer();
      },
    }),
  });
  return { store, signIn, asked, answerWith: (a: () => Promise<CallerHistory>) => (answer = a) };
}

describe("caller history slice", () => {
  it("reads a number's history with the call's queue and keeps it by number", async () => {
    const f = fixture();
    await f.signIn("agent1");
    await f.store.getState().loadCallerHistory("+14155550100", "q1");
    expect(f.asked).toEqual([{ token: "token-agent1", number: "+14155550100", queueId: "q1" }]);
    expect(f.store.getState().callerHistory["+14155550100"]).toEqual({ loading: false, history: HISTORY, error: null });
  });

  it("shows a refusal and keeps what it had", async () => {
    const f = fixture();
    await f.signIn("agent1");
    await f.store.getState().loadCallerHistory("+14155550100");
    f.answerWith(async () => {
      throw new Error("403 forbidden");
    });
    await f.store.getState().loadCallerHistory("+14155550100");
    const entry = f.store.getState().callerHistory["+14155550100"];
    expect(entry?.history).toEqual(HISTORY);
    expect(entry?.error).not.toBeNull();
  });

  it("starts empty for a new session and drops an answer meant for the old one", async () => {
    const f = fixture();
    await f.signIn("agent1");
    const late = deferred<CallerHistory>();
    f.answerWith(() => late.promise);
    const pending = f.store.getState().loadCallerHistory("+14155550100");
    await f.store.getState().signOut();
    await f.signIn("agent2");
    f.answerWith(async () => ({ ...HISTORY, number: "+14155550111", name: "" }));
    await f.store.getState().loadCallerHistory("+14155550111");
    late.resolve(HISTORY);
    await pending;
    expect(Object.keys(f.store.getState().callerHistory)).toEqual(["+14155550111"]);
  });
});
