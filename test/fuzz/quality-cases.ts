import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { CH_PUB_ENV, LAKE, MANIFEST_TEXT, type FuzzWorld } from '../support/fuzz-world.js';
import { badInteger, badInvocationId, PROTOTYPE_NAMES, unknownFlag, unknownInvocationId } from './arbitraries.js';
import { brokenManifest, badSelector } from './manifest-mutations.js';

/**
 * `cutpoint quality inspect | inspect-all | diagnose | observe | replay` with one defect
 * each, against the seeded world: the route manifest has a ClickHouse exchange route (LAKE,
 * quality-governed) whose target is a loopback port nothing listens on, and the journal
 * holds two SQL deliveries (neither under quality governance, so no observe or replay is
 * permitted on them). Then the grammar of `cost`, `faults list`, `local up` and `demo` (a
 * refused one never starts its emulators or its demo).
 */

const QUALITY_FLAGS: Record<string, string[]> = {
  inspect: ['aws', 'profile', 'region', 'stack', 'faults', 'format'],
  'inspect-all': ['aws', 'profile', 'region', 'stack', 'faults', 'format'],
  diagnose: ['faults', 'manifest', 'format'],
  observe: ['faults', 'manifest', 'yes', 'aws', 'profile', 'region', 'stack', 'state-machine-arn', 'name', 'format'],
  replay: ['faults', 'manifest', 'format'],
};
/** Forces an operator might wish for; none parses. */
const NO_FORCE = ['force', 'clear-guard', 'skip-quality', 'redispatch', 'release-guard', 'override'];

export function qualityCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const file = world.manifestFile;
  const lake = `${file}#${LAKE}`;
  const ids = [world.deliveredId, world.unknownId];
  const live = fc.constantFrom('diagnose', 'observe', 'replay');
  const argv = (verb: string, id: string, selector: string, extra: string[] = []) => [
    'quality',
    verb,
    id,
    '--manifest',
    selector,
    ...(verb === 'observe' ? ['--yes'] : []),
    ...extra,
  ];
  return fc.oneof(
    fc
      .tuple(fc.constantFrom('inspect', 'diagnose', 'observe', 'replay'), badInvocationId(ids))
      .map(([verb, id]): FuzzCase => ({
        what: `quality ${verb} malformed id ${JSON.stringify(id)}`,
        argv: verb === 'inspect' ? ['quality', 'inspect', id] : argv(verb, id, lake),
      })),
    fc
      .tuple(fc.constantFrom('inspect', 'diagnose', 'observe', 'replay'), unknownInvocationId)
      .map(([verb, id]): FuzzCase => ({
        what: `quality ${verb} unknown id`,
        argv: verb === 'inspect' ? ['quality', 'inspect', id] : argv(verb, id, lake),
      })),
    // Journalled, but not a quality-governed publication: no observe, no replay, nothing to diagnose on the lake route.
    fc
      .tuple(live, fc.constantFrom(...ids), fc.constantFrom(LAKE, 'daily', 'lossy'))
      .map(([verb, id, route]): FuzzCase => ({
        what: `quality ${verb} of an SQL delivery (#${route})`,
        argv: argv(verb, id, `${file}#${route}`),
      })),
    fc
      .tuple(fc.constantFrom('observe'), fc.constantFrom<string[]>([], ['--yes=no'], ['--yes=false']))
      .map(([verb, yes]): FuzzCase => ({
        what: `quality observe without confirmation ${yes.join(' ')}`,
        argv: ['quality', verb, world.unknownId, '--manifest', lake, ...yes],
      })),
    live.map((verb): FuzzCase => ({
      what: `quality ${verb} without --manifest`,
      argv: ['quality', verb, world.unknownId, ...(verb === 'observe' ? ['--yes'] : [])],
    })),
    fc.tuple(live, badSelector(file, [LAKE, 'daily', 'lossy'])).map(([verb, s]): FuzzCase => ({
      what: `quality ${verb} ${s.what}`,
      argv: argv(verb, world.unknownId, s.selector),
    })),
    fc.tuple(live, brokenManifest(MANIFEST_TEXT, LAKE)).map(([verb, m]): FuzzCase => ({
      what: `quality ${verb} manifest ${m.what}`,
      argv: argv(verb, world.unknownId, `{{route.yaml}}#${LAKE}`),
      files: { 'route.yaml': m.text },
    })),
    fc.tuple(live, fc.constantFrom('/nonexistent/route.yaml', '/', '/dev/null')).map(([verb, f]): FuzzCase => ({
      what: `quality ${verb} unreadable manifest ${f}`,
      argv: argv(verb, world.unknownId, `${f}#${LAKE}`),
    })),
    fc
      .tuple(fc.constantFrom(...Object.keys(QUALITY_FLAGS)), fc.constantFrom(...NO_FORCE))
      .map(([verb, f]): FuzzCase => ({
        what: `quality ${verb} --${f}`,
        argv:
          verb === 'inspect-all'
            ? ['quality', verb, `--${f}`]
            : verb === 'inspect'
              ? ['quality', verb, world.unknownId, `--${f}`]
              : [...argv(verb, world.unknownId, lake), `--${f}`],
      })),
    fc.constantFrom(...Object.keys(QUALITY_FLAGS)).chain((verb) =>
      unknownFlag(QUALITY_FLAGS[verb] as string[]).map((f): FuzzCase => ({
        what: `quality ${verb} unknown flag ${f}`,
        argv:
          verb === 'inspect-all'
            ? ['quality', verb, f]
            : verb === 'inspect'
              ? ['quality', verb, world.unknownId, f]
              : [...argv(verb, world.unknownId, lake), f],
      })),
    ),
    fc.constantFrom(...NO_FORCE, 'clear', 'skip', 'run', 'publish', '', ...PROTOTYPE_NAMES).map((v): FuzzCase => ({
      what: `quality unknown verb ${JSON.stringify(v)}`,
      argv: ['quality', v, world.unknownId],
    })),
    fc.constantFrom('diagnose', 'replay').map((verb): FuzzCase => ({
      what: `quality ${verb} --aws (local only)`,
      argv: [...argv(verb, world.unknownId, lake), '--aws'],
    })),
    fc.constant<FuzzCase>({
      what: 'quality inspect-all with a positional',
      argv: ['quality', 'inspect-all', world.unknownId],
    }),
    fc.constant<FuzzCase>({
      what: 'quality inspect with two ids',
      argv: ['quality', 'inspect', world.unknownId, world.deliveredId],
    }),
    fc.constant<FuzzCase>({
      what: 'quality observe with the target binding unset',
      argv: argv('observe', world.unknownId, lake),
      env: { [CH_PUB_ENV]: undefined },
    }),
    fc.constantFrom('chdb:/tmp/x', 'clickhouse://127.0.0.1:9000', 'tcp://127.0.0.1:9000').map((url): FuzzCase => ({
      what: `quality observe with a target the reader cannot reach (${url.split(':')[0]})`,
      argv: argv('observe', world.unknownId, lake),
      env: { [CH_PUB_ENV]: url },
    })),
  );
}

/** `cutpoint cost` (every knob out of its range, or the batch past 1 MiB), `faults list`, `local up`, `demo`: refused before anything starts. */
export function otherCommandCases(): fc.Arbitrary<FuzzCase> {
  const ranges: Record<string, [number, number]> = {
    rows: [1, 10_000],
    'chunk-rows': [1, 50_000],
    'batch-records': [1, 1000],
    'record-bytes': [1, 4096],
  };
  return fc.oneof(
    fc.tuple(fc.constantFrom(...Object.keys(ranges)), fc.boolean()).map(([k, above]): FuzzCase => {
      const [min, max] = ranges[k] as [number, number];
      return { what: `cost --${k} out of range`, argv: ['cost', `--${k}`, String(above ? max + 1 : min - 1)] };
    }),
    fc
      .tuple(fc.constantFrom('rows', 'chunk-rows', 'part-rows', 'batch-records', 'record-bytes'), badInteger)
      .map(([k, v]): FuzzCase => ({ what: `cost --${k} ${JSON.stringify(v)}`, argv: ['cost', `--${k}`, v] })),
    fc.constant<FuzzCase>({
      what: 'cost --part-rows below --chunk-rows',
      argv: ['cost', '--chunk-rows', '500', '--part-rows', '499'],
    }),
    fc.constant<FuzzCase>({
      what: 'cost batch past 1 MiB',
      argv: ['cost', '--batch-records', '1000', '--record-bytes', '4096'],
    }),
    unknownFlag(['rows', 'chunk-rows', 'part-rows', 'batch-records', 'record-bytes']).map((f): FuzzCase => ({
      what: `cost unknown flag ${f}`,
      argv: ['cost', f],
    })),
    fc.constantFrom('run', 'delivery', '--aws').map((p): FuzzCase => ({ what: `cost ${p}`, argv: ['cost', p] })),
    fc
      .constantFrom<string[]>(
        ['faults', 'lists'],
        ['faults', 'list', 'extra'],
        ['faults'],
        ['faults', 'list', '--aws'],
        ['faults', 'list', '--format', 'yaml'],
      )
      .map((argv): FuzzCase => ({ what: argv.join(' '), argv })),
    fc
      .tuple(fc.constantFrom('faults', 'local', 'demo', 'cost'), fc.constantFrom(...PROTOTYPE_NAMES))
      .map(([command, n]): FuzzCase => ({ what: `${command} ${n}`, argv: [command, n] })),
    fc
      .tuple(
        fc.constantFrom('--dynamodb-port', '--s3-port'),
        fc.constantFrom('0', '65536', '-1', 'abc', '80.5', '', '99999999999'),
      )
      .map(([f, v]): FuzzCase => ({ what: `local up ${f} ${JSON.stringify(v)}`, argv: ['local', 'up', f, v] })),
    fc
      .constantFrom<string[]>(['local', 'upp'], ['local', 'status', 'extra'], ['local'], ['local', 'up', '--aws'])
      .map((argv): FuzzCase => ({ what: argv.join(' '), argv })),
    fc
      .constantFrom<string[]>(
        ['demo', 'deliveries'],
        ['demo', 'quality', 'extra'],
        ['demo', 'generation', '--aws'],
        ['demo', 'delivery', '--frobnicate'],
      )
      .map((argv): FuzzCase => ({ what: argv.join(' '), argv })),
  );
}
