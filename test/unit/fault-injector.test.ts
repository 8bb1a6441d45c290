import { describe, expect, it } from 'vitest';
import { ArmedFaultInjector, faultsFromEnv, inertFaults } from '../../src/adapters/fault-injector.js';
import { parseFaultSpec } from '../../src/domain/faults.js';

describe('fault injector', () => {
  it('is inert without CUTPOINT_FAULTS', () => {
    expect(faultsFromEnv({})).toBe(inertFaults);
  });

  it('refuses to arm inside a deployed Lambda unless a game day enables it', () => {
    const env = { CUTPOINT_FAULTS: 'generation.commit.cas:fail', AWS_LAMBDA_FUNCTION_NAME: 'fn' };
    expect(() => faultsFromEnv(env)).toThrow(expect.objectContaining({ code: 'faults.refused_in_lambda' }));
    expect(faultsFromEnv({ ...env, CUTPOINT_FAULTS_IN_LAMBDA: 'enabled' })).toBeInstanceOf(ArmedFaultInjector);
  });

  it('refuses a cut point no code runs (a typo arms nothing), naming a few valid ones and where all are', () => {
    for (const spec of ['delivery.staging.create:fail', 'generation.commit.cass:lose-response', 'a.b:fail']) {
      expect(() => faultsFromEnv({ CUTPOINT_FAULTS: spec })).toThrow(
        expect.objectContaining({
          code: 'faults.unknown_cut_point',
          message: expect.stringMatching(
            /valid cut points \(`cutpoint faults list`\): cli\.object\.put, [a-z0-9.-]+(, [a-z0-9.-]+){3} and \d+ more$/,
          ),
        }),
      );
    }
    expect(() => faultsFromEnv({ CUTPOINT_FAULTS: 'generation.commit.cass:fail' })).toThrow(
      /did you mean "generation\.commit\.cas"/,
    );
    expect(
      faultsFromEnv({
        CUTPOINT_FAULTS: 'delivery.target.create-staging:fail,stream.append.head-cas:delay=5,cli.object.put:fail',
      }),
    ).toBeInstanceOf(ArmedFaultInjector);
  });

  it('applies the effect for crash-after, lose-response and delay, and not for crash-before, fail and lose-request', async () => {
    const applied: string[] = [];
    for (const kind of ['crash-before', 'crash-after', 'lose-response', 'fail', 'delay', 'lose-request'] as const) {
      const injector = new ArmedFaultInjector(parseFaultSpec(`x.y:${kind}${kind === 'delay' ? '=1' : ''}`));
      const outcome = await injector
        .at('x.y', async () => applied.push(kind))
        .then(
          () => 'ok',
          (e: Error) => e.name,
        );
      expect([kind, outcome]).toEqual([
        kind,
        {
          'crash-before': 'Cutpoint.WorkerCrashed',
          'crash-after': 'Cutpoint.WorkerCrashed',
          'lose-response': 'Cutpoint.OutcomeUnknown',
          fail: 'Cutpoint.EffectFailed',
          delay: 'ok',
          'lose-request': 'Cutpoint.OutcomeUnknown',
        }[kind],
      ]);
    }
    expect(applied).toEqual(['crash-after', 'lose-response', 'delay']);
  });
});
