// The engine's coalescing writer: one write per item at a time, an item changed during its write
// written once more with its latest value, a failure logged and not thrown, and (after a turn) the
// changes of one step written together.
import { describe, expect, it } from "vitest";
import { CoalescingWriter } from "../../server/callq/writers.js";

function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe("CoalescingWriter", () => {
  it("writes an item changed during its write once more, with its latest value, and never twice at once", async () => {
    const item = { value: 1 };
    const written: number[] = [];
    let running = 0;
    let most = 0;
    const first = gate();
    const writer = new CoalescingWriter<typeof item>((i) => {
      const value = i.value;
      running += 1;
      most = Math.max(most, running);
      return [
        (written.length === 0 ? first.opened : Promise.resolve()).then(() => {
          written.push(value);
          running -= 1;
        }),
      ];
    }, false);
    writer.save(item);
    for (const v of [2, 3, 4]) {
      item.value = v;
      writer.save(item);
    }
    first.open();
    await writer.flushed();
    expect(written).toEqual([1, 4]);
    expect(most).toBe(1);
  });

  it("with afterTurn, waits one turn so the changes of one step go out in one batch", async () => {
    const batches: string[][] = [];
    let current: string[] = [];
    const writer = new CoalescingWriter<string>((s) => {
      current.push(s);
      return [Promise.resolve()];
    }, true);
    writer.save("a");
    writer.save("b");
    writer.save("a");
    expect(current).toEqual([]);
    await writer.flushed();
    batches.push(current);
    current = [];
    expect(batches).toEqual([["a", "b"]]);
  });

  it("a failed write leaves the writer working: what the item's writes log is theirs, flushed() resolves", async () => {
    const seen: string[] = [];
    const writer = new CoalescingWriter<string>((s) => [s === "bad" ? Promise.reject(new Error("disk full")).catch(() => void seen.push(`logged ${s}`)) : Promise.resolve().then(() => void seen.push(s))], false);
    writer.save("bad");
    writer.save("good");
    await writer.flushed();
    expect(seen.sort()).toEqual(["good", "logged bad"]);
  });
});
