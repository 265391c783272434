// The repository's own modules a file loads when it runs, followed through every file it reaches:
// value imports, re-exports and dynamic import() of a literal path. Type-only imports and exports
// (`import type`, `export type`, an import whose every name is marked `type`) are erased before the
// code runs and load nothing. Packages (bare specifiers) are not followed: none of them can reach
// the repository's files. Read with the TypeScript compiler's parser, no type checking.
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** The specifiers of what `text` (the source of `file`) loads at run time, in source order. */
export function runtimeSpecifiers(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allTypes =
        clause !== undefined &&
        (clause.isTypeOnly || (clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly)));
      if (!allTypes) out.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.exportClause;
      const allTypes = node.isTypeOnly || (clause !== undefined && ts.isNamedExports(clause) && clause.elements.length > 0 && clause.elements.every((e) => e.isTypeOnly));
      if (!allTypes) out.push(node.moduleSpecifier.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg !== undefined && ts.isStringLiteralLike(arg)) out.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

const isFile = (path: string) => existsSync(path) && statSync(path).isFile();

/** The file a relative specifier names (`./x.js` written for `./x.ts`, a folder's index); undefined for a package. */
export function resolveSpecifier(from: string, specifier: string, exists: (path: string) => boolean = isFile): string | undefined {
  if (!specifier.startsWith("./") && !specifier.startsWith("../")) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx)$/, "");
  const candidates = [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, base, join(base, "index.ts"), join(base, "index.tsx")];
  const found = candidates.find((c) => exists(c));
  if (found === undefined) throw new Error(`${from}: cannot resolve ${specifier}`);
  return found;
}

export interface GraphSource {
  /** The text of a file; a test may hand in a file that is not on disk. */
  read(path: string): string;
  exists(path: string): boolean;
}
export const DISK: GraphSource = { read: (path) => readFileSync(path, "utf8"), exists: isFile };

/**
 * Every repository file that `entries` (absolute paths) load at run time, each with the chain of
 * files that first reached it (entry first). A file for which `stop` is true is recorded but not
 * followed further.
 */
export function reachable(entries: string[], source: GraphSource = DISK, stop: (path: string) => boolean = () => false): Map<string, string[]> {
  const seen = new Map<string, string[]>();
  const queue: [string, string[]][] = entries.map((e) => [e, [e]]);
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    const [file, chain] = item;
    if (seen.has(file)) continue;
    seen.set(file, chain);
    if (stop(file)) continue;
    for (const specifier of runtimeSpecifiers(file, source.read(file))) {
      const target = resolveSpecifier(file, specifier, source.exists);
      if (target !== undefined && !seen.has(target)) queue.push([target, [...chain, target]]);
    }
  }
  return seen;
}

/** A chain as repository-relative paths joined by arrows. */
export const showChain = (root: string, chain: string[]) => chain.map((f) => relative(root, f)).join(" -> ");
