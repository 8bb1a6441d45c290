// The folder layers lint enforces (docs/architecture.md 'The layers lint holds': the layers). Each entry: the
// files it applies to (a repository-relative folder, less the folders in `except`) and the
// folders they may not import from, with the reason. An import is resolved against the importing file, so a relative
// path is judged by where it lands, type-only and dynamic imports included.
import { dirname, relative, resolve } from 'node:path';

const ROOT = dirname(new URL(import.meta.url).pathname).replace(/\/eslint$/, '');
const USE_CASES = [
  'src/delivery',
  'src/publication',
  'src/quality',
  'src/stream',
  'src/generation',
  'src/recovery',
  'src/operations',
  'src/gameday',
];
const COMPOSITION = ['src/cli', 'src/local', 'src/cost', 'src/demo', 'functions', 'infra', 'test'];

export const LAYERS = [
  {
    from: 'src/domain',
    forbidden: [
      ...USE_CASES,
      ...COMPOSITION,
      'src/ports',
      'src/adapters',
      'src/engine',
      'src/objects',
      'src/authority',
      'src/telemetry',
    ],
    why: 'src/domain holds pure rules and the values they judge: it imports only the domain (ports import their value types from it)',
  },
  {
    from: 'src/ports',
    forbidden: [...USE_CASES, ...COMPOSITION, 'src/adapters', 'src/engine', 'src/objects', 'src/authority'],
    why: 'src/ports holds interfaces: it imports only the domain and other ports',
  },
  {
    from: 'src/stream',
    forbidden: ['src/delivery', 'src/publication', 'src/quality', ...COMPOSITION],
    why: 'the stream log stands on its own: no delivery, publication or quality, no composition root',
  },
  {
    from: 'src/generation',
    forbidden: ['src/delivery', 'src/publication', 'src/quality', 'src/stream', ...COMPOSITION],
    why: 'the generation mechanism serves the stream and publication: it imports neither, nor a composition root',
  },
  {
    from: 'src/delivery',
    forbidden: ['src/publication', 'src/quality', ...COMPOSITION],
    why: 'delivery calls how a window is published through its publication mode (src/delivery/publication-mode.ts); the ClickHouse exchange mode and its quality governance build on delivery, never the reverse',
  },
  {
    from: 'src/publication',
    forbidden: ['src/adapters', ...COMPOSITION],
    why: 'the exchange publication is a use case over ports: its adapters come from the composition root',
  },
  {
    from: 'src/quality',
    forbidden: ['src/adapters', ...COMPOSITION],
    why: 'quality governance is a use case over ports: the reader process (src/adapters/reader-process) comes from the composition root',
  },
  {
    from: 'src/operations',
    forbidden: ['src/adapters', ...COMPOSITION],
    why: 'operations across subsystems (the retained-items sweep) are use cases over ports: no adapter, no composition root',
  },
  {
    from: 'src/gameday',
    forbidden: ['src/adapters', ...COMPOSITION],
    why: 'a game day drills flows through its driver (src/ports/gameday-driver.ts): the local runtime or a deployed stack comes from the composition root',
  },
  {
    from: 'src',
    forbidden: ['test', 'infra'],
    why: 'shipped code never imports tests or the CDK app',
  },
  {
    from: 'src',
    except: ['src/registry'],
    forbidden: ['functions'],
    why: 'only the registry (src/registry) refers to the Lambda handlers; the CLI, the local runner and the cost model build them through it',
  },
  {
    from: 'statemachines',
    forbidden: ['src/adapters', 'src/local', 'src/cli', 'test'],
    why: 'flow specs are data: they read the registry, never a runtime',
  },
];

const inside = (path, folder) => path === folder || path.startsWith(`${folder}/`);

/** The ESLint rule: `cutpoint/folder-layers`. */
export const folderLayers = {
  meta: {
    type: 'problem',
    schema: [],
    messages: { forbidden: '{{from}} may not import {{to}}: {{why}} (eslint/folder-layers.js).' },
  },
  create(context) {
    const file = relative(ROOT, context.filename);
    const layers = LAYERS.filter(
      (layer) => inside(file, layer.from) && !(layer.except ?? []).some((folder) => inside(file, folder)),
    );
    if (layers.length === 0) return {};
    const check = (node, source) => {
      if (typeof source !== 'string' || !source.startsWith('.')) return;
      const target = relative(ROOT, resolve(dirname(context.filename), source));
      for (const layer of layers) {
        const to = layer.forbidden.find((folder) => inside(target, folder) && !inside(file, folder));
        if (to) context.report({ node, messageId: 'forbidden', data: { from: layer.from, to, why: layer.why } });
      }
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};
