import { describe, expect, it } from 'vitest';
import { parseDispatchRequest } from '../../src/recovery/dispatch-request.js';

/**
 * The recovery dispatcher's event grammar (found by the fuzz suite, test/fuzz/recovery-cases.ts):
 * detail.name must be a Step Functions execution name and detail.executionArn the ARN of that
 * execution. Before, any non-empty strings passed, so a malformed event started a recovery
 * under a name Step Functions refuses (or with `recoveryOf` naming no execution).
 */
const arn = (name: string, machine = 'commit-generation') =>
  `arn:aws:states:eu-west-1:111111111111:execution:${machine}:${name}`;
const request = (executionArn: string, name: string) => ({
  flow: 'commit-generation',
  designedStops: [],
  detail: { executionArn, name, status: 'FAILED', input: '{}' },
});
const refused = { name: 'Cutpoint.ValidationError', code: 'recovery.event_invalid' };

describe('recovery dispatcher: detail.executionArn and detail.name', () => {
  it('accepts an execution ARN whose last segment is the name (AWS, the local runner, another partition, a Map child)', () => {
    for (const [executionArn, name] of [
      [arn('n'), 'n'],
      [
        'arn:aws:states:local:000000000000:execution:commit-generation:0c1d2e3f-aaaa-4bbb-8ccc-0123456789ab',
        '0c1d2e3f-aaaa-4bbb-8ccc-0123456789ab',
      ],
      ['arn:aws-us-gov:states:us-gov-west-1:111111111111:execution:m:run.2026-12-02_x', 'run.2026-12-02_x'],
      ['arn:aws:states:local:000000000000:execution:deliver-window/Parts:child-1', 'child-1'],
      [arn('n'.repeat(80)), 'n'.repeat(80)],
    ] as const) {
      expect(parseDispatchRequest(request(executionArn, name)).detail).toMatchObject({ executionArn, name });
    }
  });

  it('refuses a name Step Functions would refuse: too long, whitespace, reserved or control characters', () => {
    for (const name of ['n'.repeat(81), 'a b', 'a\nb', 'a:b', 'a/b', 'a#b', 'a*b', 'a\u0007b', 'a\u009bb', '[x]']) {
      expect(() => parseDispatchRequest(request(arn('ok'), name)), JSON.stringify(name)).toThrow(
        expect.objectContaining(refused),
      );
    }
  });

  it('refuses an ARN that is not an execution ARN, or names another execution', () => {
    for (const executionArn of [
      'x',
      arn('other'),
      'arn:aws:states:eu-west-1:111111111111:stateMachine:commit-generation',
      'arn:aws:states:eu-west-1:111111111111:stateMachine:commit-generation:n',
      'arn:aws:lambda:eu-west-1:111111111111:execution:m:n',
      'arn:aws:states:eu-west-1:1111:execution:m:n',
      'arn:aws:states:EU-WEST-1:111111111111:execution:m:n',
      'arn:aws:states:eu-west-1:111111111111:execution::n',
      'arn:aws:states:eu-west-1:111111111111:execution:m x:n',
      'arn:aws:states:eu-west-1:111111111111:express:m:n:id',
    ]) {
      expect(() => parseDispatchRequest(request(executionArn, 'n')), executionArn).toThrow(
        expect.objectContaining(refused),
      );
    }
  });

  it('never echoes the event values in its message', () => {
    const secretish = 'postgres://user:pw@host/db';
    expect(() => parseDispatchRequest(request(secretish, 'n'))).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(secretish) }),
    );
    expect(() => parseDispatchRequest(request(arn('n'), `n ${secretish}`))).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(secretish) }),
    );
  });
});
