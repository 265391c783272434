// Prints one benchmark's figures as an aligned table, the form bench/README.md records.

export function report(name: string, rows: [string, string][]): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(`\n${name}\n${rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`).join("\n")}\n`);
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
}
