// The queue engine's host on a real store: the change feed reaches the engine as queue and user
// changes, and the ledger reads back what a hand-edited or stale file holds without breaking it.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RECIPIENT_STATES_COLLECTION } from "../../server/callq-host/index.js";
import { Store } from "../../server/store/index.js";
import { ACCOUNT, callqRig, members, settle, TestCall, type CallqRig } from "../helpers/callq.js";

let rig: CallqRig;
/** Data directories a test named itself (the rig removes only those it made). */
const dirs: string[] = [];
afterEach(async () => {
  await rig.close();
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

describe("the store's change feed", () => {
  it("a queue deleted in the store sends its waiting callers away with no_queue", async () => {
    rig = await callqRig();
    const queue = await rig.queue({ name: "Gone", members: {} });
    const done = rig.engine.join(ACCOUNT, queue, new TestCall("c"));
    await settle();
    await (await rig.store.account(ACCOUNT, "callq_queues")).delete(queue);
    expect(await done).toEqual({ kind: "no_queue" });
    await expect(rig.engine.queueStatus(ACCOUNT, queue)).rejects.toMatchObject({ code: "no_queue" });
  });

  it("a user disabled in the store is logged out and refused; a renamed supervisor is shown by the new name", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent");
    const sup = await rig.user("sup", { first_name: "Sue" });
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    rig.engine.setWiretap(ACCOUNT, sup, { target: agent, mode: "eavesdrop" });
    await settle();
    const users = await rig.store.account(ACCOUNT, "users");
    await users.update(sup, { ...users.get(sup)?.data, first_name: "Susan", last_name: "Super" });
    expect((await rig.engine.recipientStatus(ACCOUNT, agent)).wiretapped_by).toMatchObject([{ recipient_id: sup, name: "Susan Super" }]);

    await users.update(agent, { ...users.get(agent)?.data, enabled: false });
    expect(rig.engine.isLoggedIn(ACCOUNT, agent)).toBe(false);
    expect(rig.names("recipient", agent).at(-1)).toBe("logout");
    await expect(rig.engine.recipientStatus(ACCOUNT, agent)).rejects.toMatchObject({ code: "no_recipient" });
  });

  it("a user deleted in the store is logged out and forgotten", async () => {
    rig = await callqRig();
    const agent = await rig.user("agent");
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    await (await rig.store.account(ACCOUNT, "users")).delete(agent);
    expect(await rig.engine.loggedInRecipients(ACCOUNT)).toEqual([]);
  });
});

describe("the ledger in callq_recipient_states", () => {
  it("a hand-edited state reads back checked: unknown values become their defaults", async () => {
    rig = await callqRig();
    dirs.push(rig.dir);
    const agent = await rig.user("agent");
    const queue = await rig.queue({ name: "Q", members: members(agent) });
    const saved = await rig.store.account(ACCOUNT, RECIPIENT_STATES_COLLECTION);
    await saved.create({ state: "Dancing", pending_away: "yes", queue_availability: { [queue]: "no", other: false }, stats: { total_calls: "many", missed_calls: 2 } }, { id: agent });
    rig = await rig.restart();
    expect(await rig.engine.recipientStatus(ACCOUNT, agent)).toMatchObject({
      availability_state: "Not-Logged-In",
      queue_availability: { other: false },
      stats: { total_calls: 0, missed_calls: 2 },
    });
  });

  it("a saved state of a user who stopped being a recipient while the server was down is not restored", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sb-callq-host-"));
    dirs.push(dir);
    rig = await callqRig(dir);
    const agent = await rig.user("agent");
    await rig.engine.recipientAction(ACCOUNT, agent, "login_ready");
    await rig.close();
    const store = await Store.open({ dir });
    const users = await store.account(ACCOUNT, "users");
    await users.update(agent, { ...users.get(agent)?.data, callq: { enabled: false } });
    expect((await store.account(ACCOUNT, RECIPIENT_STATES_COLLECTION)).get(agent)?.data).toMatchObject({ state: "Ready" });
    await store.close();
    rig = await callqRig(dir);
    expect(await rig.engine.loggedInRecipients(ACCOUNT)).toEqual([]);
  });
});
