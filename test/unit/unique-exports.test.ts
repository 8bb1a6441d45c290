import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * One name per concept, in code (README glossary: "One word, one meaning"): an identifier
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

/**
 * Left for the integrator: declared in src/delivery and another file, while that folder is
 * being rewritten elsewhere. Each entry is removed when its name is resolved; the test
 * fails on a stale entry as on a new duplicate.
 */
const PENDING: Record<string, string[]> = {
  // Same values: src/delivery/recovery/actions.ts should import the domain's list.
  RECOVERY_ACTIONS: ['src/delivery/recovery/actions.ts', 'src/domain/delivery/journal-states.ts'],
  // Two things: the admission decision (src/quality) vs the governance axis of an outcome.
  governanceOf: ['src/domain/quality/outcome.ts', 'src/quality/admission.ts'],
  // Two things: the PlanParts step (src/delivery/steps) vs the pure part planner.
  planParts: ['src/delivery/steps/plan-parts.ts', 'src/domain/delivery/parts.ts'],
  // Fence equality, twice: one declaration (the domain's), imported by src/delivery.
  sameFence: ['src/delivery/journal/journaled-write.ts', 'src/domain/stream.ts'],
  // Two validations: a lane owner's fence vs a delivery custody fence.
  validateFence: ['src/delivery/journal/keys.ts', 'src/domain/stream.ts'],
  // Two things: a generation ref vs a delivery journal ref.
  validateRef: ['src/delivery/journal/keys.ts', 'src/domain/generation.ts'],
};

function sources(): string[] {
  return FOLDERS.flatMap((folder) =>
    readdirSync(join(root, folder), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
      .map((e) => relative(root, join(e.parentPath, e.name))),
  );
}

/** The names a file declares with `export` (not re-exports). */
function exportedDeclarations(file: string): string[] {
  const sf = ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.Latest);
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
function declaredTwice(files: readonly string[]): Record<string, string[]> {
  const where = new Map<string, string[]>();
  for (const file of files)
    for (const name of exportedDeclarations(file)) where.set(name, [...(where.get(name) ?? []), file]);
  return Object.fromEntries(
    [...where]
      .filter(([name, declared]) => declared.length > 1 && !PER_MODULE.has(name))
      .map(([name, declared]) => [name, declared.sort()]),
  );
}

describe('unique exports', () => {
  it('declares each exported name in one file (the pending ones listed above excepted)', () => {
    expect(declaredTwice(sources())).toEqual(PENDING);
  });

  it('sees a name two files declare, and not a re-export or a per-module entry point', () => {
    expect(declaredTwice(['src/delivery/journal/keys.ts', 'src/domain/stream.ts'])).toMatchObject({
      validateFence: ['src/delivery/journal/keys.ts', 'src/domain/stream.ts'],
    });
    expect(exportedDeclarations('src/ports/target.ts')).not.toContain('TargetCheckRequest');
    expect(exportedDeclarations('functions/stream/trim.ts')).toContain('handler');
    expect(declaredTwice(['functions/stream/trim.ts', 'functions/stream/takeover.ts'])).toEqual({});
  });
});
