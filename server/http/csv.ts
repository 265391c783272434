// `accept=csv`: rows flattened to dotted column names, one header line, RFC 4180 quoting.

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
  const lines = [columns.map(quote).join(",")];
  for (const row of rows) lines.push(columns.map((c) => quote(row[c] ?? "")).join(","));
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

function quote(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}
