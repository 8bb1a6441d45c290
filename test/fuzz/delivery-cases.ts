import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { LAKE, MANIFEST_TEXT, PG_ENV, PG_PASSWORD_ENV, ROUTES, type FuzzWorld } from '../support/fuzz-world.js';
import { badInvocationId, unknownFlag, unknownInvocationId } from './arbitraries.js';
import {
  badSelector,
  brokenManifest,
  editedManifest,
  partsManifest,
  undeliverableTarget,
} from './manifest-mutations.js';

/**
 * `cutpoint delivery inspect | inspect-all | reconcile | resume | retire | run` with one
 * defect each. The live actions start from `reconcile <PUBLICATION_UNKNOWN id> --manifest
 * route.yaml#lossy --yes` (valid: it would act) or from an action the journal does not
 * permit; `run` starts from `run --manifest route.yaml#daily` (valid: it would deliver);
 * then exactly one mutation makes the command invalid.
 */

const LIVE_FLAGS = [
  'manifest',
  'yes',
  'format',
  'aws',
  'profile',
  'region',
  'stack',
  'faults',
  'state-machine-arn',
  'name',
];
const RUN_FLAGS = [
  'manifest',
  'invocation-id',
  'format',
  'aws',
  'profile',
  'region',
  'stack',
  'faults',
  'state-machine-arn',
];

export function inspectCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const ids = [world.deliveredId, world.unknownId];
  return fc.oneof(
    badInvocationId(ids).map((id): FuzzCase => ({
      what: `inspect malformed id: ${JSON.stringify(id)}`,
      argv: ['delivery', 'inspect', id, '--format', 'json'],
    })),
    unknownInvocationId.map((id): FuzzCase => ({ what: 'inspect unknown id', argv: ['delivery', 'inspect', id] })),
    fc
      .oneof(
        fc.stringMatching(/^[a-z]{1,8}$/),
        fc.constantFrom(
          'WAREHOUSE.DWH.EVENTS',
          'warehouse.dwh',
          'warehouse..events',
          'a.b.c.d',
          'warehouse.dwh.events\n',
          '',
        ),
      )
      .map((t): FuzzCase => ({
        what: `inspect-all --target ${JSON.stringify(t)}`,
        argv: ['delivery', 'inspect-all', '--target', t],
      })),
    fc
      .constantFrom('x', world.deliveredId)
      .map((p): FuzzCase => ({ what: 'inspect-all with a positional', argv: ['delivery', 'inspect-all', p] })),
  );
}

interface LiveBase {
  action: string;
  id: string;
  route: string;
}

export function liveActionCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const file = world.manifestFile;
  const bases: LiveBase[] = [
    { action: 'reconcile', id: world.unknownId, route: 'lossy' },
    { action: 'retire', id: world.unknownId, route: 'lossy' },
    { action: 'resume', id: world.unknownId, route: 'lossy' },
    { action: 'reconcile', id: world.deliveredId, route: 'daily' },
    { action: 'retire', id: world.deliveredId, route: 'daily' },
  ];
  const argv = (b: LiveBase, selector: string, extra: string[] = ['--yes']) => [
    'delivery',
    b.action,
    b.id,
    '--manifest',
    selector,
    ...extra,
    '--format',
    'json',
  ];
  const valid = bases[0] as LiveBase;
  // Mostly the valid command (one mutation from acting), sometimes one the journal does not permit.
  const base = fc.oneof(
    { weight: 3, arbitrary: fc.constant(valid) },
    { weight: 2, arbitrary: fc.constantFrom(...bases.slice(1)) },
  );
  return fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .tuple(base, fc.constantFrom(`${file}#lossy`, `${file}#lossy`, '/nonexistent.yaml#lossy', 'no-selector'))
        .map(([b, sel]): FuzzCase => ({ what: `live without --yes: ${b.action}`, argv: argv(b, sel, []) })),
    },
    fc.tuple(base, badInvocationId([world.unknownId, world.deliveredId])).map(([b, id]): FuzzCase => ({
      what: `live malformed id: ${b.action} ${JSON.stringify(id)}`,
      argv: argv({ ...b, id }, `${file}#${b.route}`),
    })),
    fc.tuple(base, unknownInvocationId).map(([b, id]): FuzzCase => ({
      what: `live unknown id: ${b.action}`,
      argv: argv({ ...b, id }, `${file}#${b.route}`),
    })),
    fc
      .tuple(base, badSelector(file, [...ROUTES, LAKE]))
      .map(([b, s]): FuzzCase => ({ what: `live ${s.what}: ${b.action}`, argv: argv(b, s.selector) })),
    fc
      .tuple(base, fc.oneof(brokenManifest(MANIFEST_TEXT, valid.route), editedManifest(MANIFEST_TEXT)))
      .map(([b, m]): FuzzCase => ({
        what: `live manifest ${m.what}: ${b.action}`,
        argv: argv(b, `{{route.yaml}}#${b.route}`),
        files: { 'route.yaml': m.text },
      })),
    fc.constant<FuzzCase>({ what: 'live another route of the sealed manifest', argv: argv(valid, `${file}#daily`) }),
    fc
      .constantFrom('/nonexistent/route.yaml', '/', '/dev/null', '/proc/self/status')
      .map((f): FuzzCase => ({ what: `live unreadable manifest ${f}`, argv: argv(valid, `${f}#lossy`) })),
    fc.tuple(base, unknownFlag(LIVE_FLAGS)).map(([b, flag]): FuzzCase => ({
      what: `live unknown flag ${flag}`,
      argv: [...argv(b, `${file}#${b.route}`), flag],
    })),
    fc
      .tuple(
        base,
        fc.stringMatching(/^[a-z]{1,6}$/).filter((f) => f !== 'json' && f !== 'text'),
      )
      .map(([b, f]): FuzzCase => ({
        what: `live --format ${f}`,
        argv: ['delivery', b.action, b.id, '--manifest', `${file}#${b.route}`, '--yes', '--format', f],
      })),
    fc
      .tuple(base, fc.constantFrom('no', 'false', '0', ''))
      .map(([b, v]): FuzzCase => ({ what: `live --yes=${v}`, argv: argv(b, `${file}#${b.route}`, [`--yes=${v}`]) })),
    base.map((b): FuzzCase => ({
      what: 'live extra positional',
      argv: ['delivery', b.action, b.id, 'extra', '--manifest', `${file}#${b.route}`, '--yes'],
    })),
    base.map((b): FuzzCase => ({ what: 'live without --manifest', argv: ['delivery', b.action, b.id, '--yes'] })),
    base.map((b): FuzzCase => ({
      what: 'live --manifest without value',
      argv: ['delivery', b.action, b.id, '--yes', '--manifest'],
    })),
    fc.constant<FuzzCase>({
      what: 'live with the target binding unset',
      argv: argv(valid, `${file}#lossy`),
      env: { [PG_ENV]: undefined },
    }),
  );
}

export function runCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const file = world.manifestFile;
  const route = fc.constantFrom(...ROUTES);
  const run = (selector: string, extra: string[] = []) => [
    'delivery',
    'run',
    '--manifest',
    selector,
    ...extra,
    '--format',
    'json',
  ];
  return fc.oneof(
    route.chain((r) =>
      brokenManifest(MANIFEST_TEXT, r).map((m): FuzzCase => ({
        what: `run manifest ${m.what}`,
        argv: run(`{{route.yaml}}#${r}`),
        files: { 'route.yaml': m.text },
      })),
    ),
    // A valid manifest whose target cannot be delivered into: refused by Begin's read-only check, with its own code
    // (on #daily, whose target no invocation holds: #lossy's custody is refused first). The binding without the
    // world's decoy password variable, so the target is reached and the check is what refuses.
    undeliverableTarget(MANIFEST_TEXT.replace(`, password_env: ${PG_PASSWORD_ENV}`, ''), 'daily').map(
      (m): FuzzCase => ({
        what: `run undeliverable ${m.what}`,
        argv: run('{{route.yaml}}#daily'),
        files: { 'route.yaml': m.text },
        forbiddenCodes: /^(?!delivery\.target_(table_missing|not_user_table|column_missing)$)/,
      }),
    ),
    badSelector(file, [...ROUTES, LAKE]).map((s): FuzzCase => ({ what: `run ${s.what}`, argv: run(s.selector) })),
    badInvocationId([world.deliveredId, world.unknownId]).map((id): FuzzCase => ({
      what: `run malformed --invocation-id ${JSON.stringify(id)}`,
      argv: run(`${file}#daily`, ['--invocation-id', id]),
    })),
    // An invocation id sealed to another route of this manifest.
    fc
      .constantFrom<[string, string]>([world.deliveredId, 'lossy'], [world.unknownId, 'daily'])
      .map(([id, r]): FuzzCase => ({
        what: `run --invocation-id of another route's invocation (#${r})`,
        argv: run(`${file}#${r}`, ['--invocation-id', id]),
      })),
    // The same text in another file: the seal names the selector's file.
    fc.constant<FuzzCase>({
      what: 'run --invocation-id sealed to another manifest file',
      argv: run('{{copy.yaml}}#daily', ['--invocation-id', world.deliveredId]),
      files: { 'copy.yaml': MANIFEST_TEXT },
    }),
    fc
      .constantFrom('/nonexistent/route.yaml', '/', '/dev/null')
      .map((f): FuzzCase => ({ what: `run unreadable manifest ${f}`, argv: run(`${f}#daily`) })),
    unknownFlag(RUN_FLAGS).map((flag): FuzzCase => ({
      what: `run unknown flag ${flag}`,
      argv: [...run(`${file}#daily`), flag],
    })),
    fc
      .stringMatching(/^[a-z]{1,6}$/)
      .filter((f) => f !== 'json' && f !== 'text')
      .map((f): FuzzCase => ({
        what: `run --format ${f}`,
        argv: ['delivery', 'run', '--manifest', `${file}#daily`, '--format', f],
      })),
    fc.constant<FuzzCase>({
      what: 'run extra positional',
      argv: ['delivery', 'run', 'daily', '--manifest', `${file}#daily`],
    }),
    fc.constant<FuzzCase>({ what: 'run without --manifest', argv: ['delivery', 'run', '--format', 'json'] }),
    fc.constant<FuzzCase>({
      what: 'run with the target binding unset',
      argv: run(`${file}#daily`),
      env: { [PG_ENV]: undefined },
    }),
  );
}

/**
 * Delivery with parts: `delivery run` (and a live action, whose sealed manifest it no longer
 * is) with the route's part sizing or window broken, and the options of run | reconcile |
 * resume | retire that only mean something with --aws given without it.
 */
export function partsCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const file = world.manifestFile;
  const route = fc.constantFrom(...ROUTES, LAKE);
  return fc.oneof(
    route.chain((r) =>
      partsManifest(MANIFEST_TEXT, r).map((m): FuzzCase => ({
        what: `run #${r} manifest ${m.what}`,
        argv: ['delivery', 'run', '--manifest', `{{route.yaml}}#${r}`],
        files: { 'route.yaml': m.text },
      })),
    ),
    partsManifest(MANIFEST_TEXT, 'lossy').map((m): FuzzCase => ({
      what: `reconcile manifest ${m.what}`,
      argv: ['delivery', 'reconcile', world.unknownId, '--manifest', '{{route.yaml}}#lossy', '--yes'],
      files: { 'route.yaml': m.text },
    })),
    fc
      .tuple(
        fc.constantFrom('reconcile', 'resume', 'retire'),
        fc.constantFrom<string[]>(
          ['--state-machine-arn', 'arn:aws:states:us-east-1:111111111111:stateMachine:x'],
          ['--name', 'x'],
        ),
      )
      .map(([action, extra]): FuzzCase => ({
        what: `${action} ${extra[0]} without --aws`,
        argv: ['delivery', action, world.unknownId, '--manifest', `${file}#lossy`, '--yes', ...extra],
      })),
    fc
      .constantFrom<string[]>(
        ['--state-machine-arn', 'arn:aws:states:us-east-1:111111111111:stateMachine:x'],
        ['--name', 'x'],
      )
      .map((extra): FuzzCase => ({
        what: `run ${extra[0]} without --aws`,
        argv: ['delivery', 'run', '--manifest', `${file}#daily`, ...extra],
      })),
    fc.constantFrom('', 'inv-', 'inv-aaaaaaaaaaaaaaaaaaaaaaaaab').map((id): FuzzCase => ({
      what: `run #${LAKE} --invocation-id ${JSON.stringify(id)}`,
      argv: ['delivery', 'run', '--manifest', `${file}#${LAKE}`, '--invocation-id', id],
    })),
  );
}
