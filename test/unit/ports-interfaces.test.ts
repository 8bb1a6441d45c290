import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * src/ports holds interfaces only (docs/architecture.md 'The layers lint holds'): what a use case needs from
 * the world, as types. A value — a class, a function, a constant — is an implementation
 * (src/adapters) or a rule (src/domain), never a port.
 */
const dir = fileURLToPath(new URL('../../src/ports/', import.meta.url));

/** The runtime values a source file declares or exports: `export const/let/function/class/enum`, `export { x }` of a value. */
function values(file: string, text: string): string[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const found: string[] = [];
  for (const s of sf.statements) {
    const exported = ts.canHaveModifiers(s) && ts.getModifiers(s)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    if (ts.isVariableStatement(s) && exported)
      for (const d of s.declarationList.declarations) found.push(d.name.getText(sf));
    else if ((ts.isFunctionDeclaration(s) || ts.isClassDeclaration(s) || ts.isEnumDeclaration(s)) && exported)
      found.push(s.name?.text ?? '(anonymous)');
    else if (ts.isExportDeclaration(s) && !s.isTypeOnly && s.exportClause && ts.isNamedExports(s.exportClause))
      for (const e of s.exportClause.elements) if (!e.isTypeOnly) found.push(e.name.text);
  }
  return found;
}

describe('src/ports: interfaces only', () => {
  it('no port file exports a value', () => {
    const offending = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .flatMap((f) => values(f, readFileSync(`${dir}${f}`, 'utf8')).map((name) => `${f}: ${name}`));
    expect(offending).toEqual([]);
  });

  it('sees a class, a function, a constant and a value re-export, and lets types through', () => {
    const text = [
      'export interface A { x: number }',
      'export type B = A;',
      'export type { C } from "./c.js";',
      'export class D {}',
      'export function e() {}',
      'export const f = 1;',
      'export { g } from "./g.js";',
    ].join('\n');
    expect(values('x.ts', text)).toEqual(['D', 'e', 'f', 'g']);
  });
});
