import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * One name per concept, in code (docs/architecture.md "Glossary": "One word, one meaning"): an identifier
 * the shipped code exports (src, functions, statemachines, infra) is declared in one file.
 * Two declarations of one name either mean the same thing (then one is declared and the
 * other file imports it) or two things (then one is renamed). Re-exports are not
 * declarations and do not count.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['src', 'functions', 'statemachines', 'infra'];

/**
 * The entry points every Lambda module in functions/ exports by convention: one concept
 * (this module's handler, and the factory that builds it from its deps), one per module.
 */
const PER_MODULE = new Set(['handler', 'makeHandler']);

function sources(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
      .map((e) => relative(root, join(e.parentPath, e.name))),
  );
}

type Read = (file: string) => string;
const readSource: Read = (file) => readFileSync(join(root, file), 'utf8');

/** The names a file declares with `export` (not re-exports). */
function exportedDeclarations(file: string, read: Read = readSource): string[] {
  const sf = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest);
  const names: string[] = [];
  for (const statement of sf.statements) {
    const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
    if (!modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isVariableStatement(statement)) {
      for (const d of statement.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isInterfaceDeclaration(statement) ||
        ts.isTypeAliasDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name
    ) {
      names.push(statement.name.text);
    }
  }
  return [...new Set(names)];
}

/** Every exported name declared in more than one file, with its files (sorted). */
function declaredTwice(files: readonly string[], read: Read = readSource): Record<string, string[]> {
  const where = new Map<string, string[]>();
  for (const file of files)
    for (const name of exportedDeclarations(file, read)) where.set(name, [...(where.get(name) ?? []), file]);
  return Object.fromEntries(
    [...where]
      .filter(([name, declared]) => declared.length > 1 && !PER_MODULE.has(name))
      .map(([name, declared]) => [name, declared.sort()]),
  );
}

describe('unique exports', () => {
  it('declares each exported name in one file', () => {
    expect(declaredTwice(sources())).toEqual({});
  });

  it('sees a name two files declare, and not a re-export or a per-module entry point', () => {
    const files: Record<string, string> = {
      'a.ts': 'export function validateFence(v: unknown) { return v; }\nexport { other } from "./c.js";\n',
      'b.ts': 'export const validateFence = 1;\nexport type other = string;\n',
    };
    expect(declaredTwice(['a.ts', 'b.ts'], (f) => files[f]!)).toEqual({ validateFence: ['a.ts', 'b.ts'] });
    expect(exportedDeclarations('src/ports/target.ts')).not.toContain('TargetCheckRequest');
    expect(exportedDeclarations('functions/stream/trim.ts')).toContain('handler');
    expect(declaredTwice(['functions/stream/trim.ts', 'functions/stream/takeover.ts'])).toEqual({});
  });
});
