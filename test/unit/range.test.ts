import { describe, expect, it } from "vitest";
import { contentDisposition, ifRangeHolds, parseRange } from "../../server/http/binary.js";

describe("parseRange", () => {
  const size = 1000;

  it("serves the whole file without a Range header", () => {
    expect(parseRange(undefined, size)).toEqual({ kind: "whole" });
  });

  it("reads bytes=a-b as an inclusive span", () => {
    expect(parseRange("bytes=0-99", size)).toEqual({ kind: "partial", start: 0, end: 99 });
    expect(parseRange("bytes=500-500", size)).toEqual({ kind: "partial", start: 500, end: 500 });
  });

  it("clamps an end past the file to its last byte", () => {
    expect(parseRange("bytes=900-5000", size)).toEqual({ kind: "partial", start: 900, end: 999 });
    expect(parseRange("bytes=0-99999999999999999999999", size)).toEqual({ kind: "partial", start: 0, end: 999 });
  });

  it("reads bytes=a- as the rest of the file, bytes=0- as all of it in a 206", () => {
    expect(parseRange("bytes=990-", size)).toEqual({ kind: "partial", start: 990, end: 999 });
    expect(parseRange("bytes=0-", size)).toEqual({ kind: "partial", start: 0, end: 999 });
  });

  it("reads bytes=-n as the last n bytes, all of them when n exceeds the size", () => {
    expect(parseRange("bytes=-10", size)).toEqual({ kind: "partial", start: 990, end: 999 });
    expect(parseRange("bytes=-1000", size)).toEqual({ kind: "partial", start: 0, end: 999 });
    expect(parseRange("bytes=-5000", size)).toEqual({ kind: "partial", start: 0, end: 999 });
  });

  it("is unsatisfiable when the start is at or past the end, for an empty suffix, and for an empty file", () => {
    expect(parseRange("bytes=1000-", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=1000-2000", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=99999999999999999999-", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=-0", size)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=0-0", 0)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=-5", 0)).toEqual({ kind: "unsatisfiable" });
  });

  it("takes the unit case-insensitively and tolerates spaces around the range", () => {
    expect(parseRange("Bytes=0-9", size)).toEqual({ kind: "partial", start: 0, end: 9 });
    expect(parseRange(" bytes= 5-9 ", size)).toEqual({ kind: "partial", start: 5, end: 9 });
  });

  it("ignores (whole file) what it will not serve: bad syntax, other units, reversed or several ranges", () => {
    for (const header of [
      "",
      "bytes",
      "bytes=",
      "bytes=abc",
      "bytes=5",
      "bytes=1-2-3",
      "bytes=--5",
      "bytes=-",
      "bytes=0x10-20",
      "bytes=1.5-2",
      "bytes=+1-2",
      "items=0-10",
      "0-10",
      "bytes=20-10",
      "bytes=0-9,20-29",
      "bytes=0-9,-5",
    ]) {
      expect(parseRange(header, size), header).toEqual({ kind: "whole" });
    }
  });

  it("keeps one range when the others in the list are empty", () => {
    expect(parseRange("bytes=0-9,", size)).toEqual({ kind: "partial", start: 0, end: 9 });
  });
});

describe("ifRangeHolds", () => {
  it("holds without If-Range, and only for the same strong entity tag", () => {
    expect(ifRangeHolds(undefined, "2-abc")).toBe(true);
    expect(ifRangeHolds('"2-abc"', "2-abc")).toBe(true);
    expect(ifRangeHolds('"1-abc"', "2-abc")).toBe(false);
    expect(ifRangeHolds('W/"2-abc"', "2-abc")).toBe(false);
    expect(ifRangeHolds("Wed, 21 Oct 2015 07:28:00 GMT", "2-abc")).toBe(false);
  });
});

describe("contentDisposition", () => {
  it("quotes a plain name and says inline or attachment", () => {
    expect(contentDisposition(false, "Hold music.wav")).toBe('attachment; filename="Hold music.wav"');
    expect(contentDisposition(true, "a.mp3")).toBe('inline; filename="a.mp3"');
  });

  it("never lets a name break out of its quotes or the header, and keeps non-ASCII in filename*", () => {
    const header = contentDisposition(false, 'bad"name\r\nX-Evil: 1.wav');
    expect(header).not.toMatch(/[\r\n]/);
    expect(header.startsWith('attachment; filename="bad_name__X-Evil: 1.wav"; filename*=UTF-8\'\'')).toBe(true);
    expect(contentDisposition(false, "Müsik.wav")).toBe("attachment; filename=\"M_sik.wav\"; filename*=UTF-8''M%C3%BCsik.wav");
  });
});
