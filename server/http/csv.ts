// `accept=csv`: rows flattened to dotted column names, one header line, RFC 4180 quoting, and
// every cell (header names included: keys can be client-chosen) neutralised against spreadsheet
// formula injection as OWASP advises.

export function toCsv(data: unknown): string {
  const rows = (Array.isArray(data) ? data : [data]).map((r) => flatten(r));
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!seen.has(key)) {
        seen.add(key);
        columns.push(key);
      }
    }
  }
  const lines = [columns.map(cell).join(",")];
  for (const row of rows) lines.push(columns.map((c) => cell(row[c] ?? "")).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

function flatten(value: unknown, prefix = "", out: Record<string, string> = {}): Record<string, string> {
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.length === 0 && prefix) out[prefix] = "";
    for (const [k, v] of entries) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (Array.isArray(value)) {
    out[prefix || "value"] = value.every((v) => typeof v !== "object" || v === null) ? value.join(";") : JSON.stringify(value);
  } else {
    out[prefix || "value"] = value === null || value === undefined ? "" : String(value);
  }
  return out;
}

/**
 * A spreadsheet reads a cell starting with `=`, `+`, `-`, `@`, tab or carriage return as a
 * formula (also after leading spaces, in some of them).
 */
const FORMULA_START = /^(?:[=+\-@\t\r]| +[=+\-@])/;
/**
 * A cell that is wholly one decimal number (-5, +15551234567, 1.5e3) can only be read as that
 * number, never call a function, so it is left as it is: phone numbers stay dialable.
 */
const PLAIN_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;
/**
 * Quoted when it holds a quote, a line break or a separator some spreadsheet may split on (`;` in
 * many locales, tab): unquoted, `a;=cmd` would become a second cell starting with `=`.
 */
const NEEDS_QUOTES = /[",;\t\r\n]/;

export function cell(text: string): string {
  const neutral = FORMULA_START.test(text) && !PLAIN_NUMBER.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(neutral) ? `"${neutral.replace(/"/g, '""')}"` : neutral;
}
