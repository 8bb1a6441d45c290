import { describe, expect, it } from 'vitest';
import { FLOWS } from '../../src/registry/index.js';
import { invocationIdOfExecution } from '../../src/domain/delivery/identifiers.js';
import { allStates, loadAsl, type AslDefinition } from '../../src/local/asl.js';
import { designedStopsByState } from '../../src/recovery/designed-stops.js';
import { RECOVERY_FLOWS, recoveryStopsOf } from '../../src/recovery/recovery-stops.js';
import { recoveryStopNotice } from '../../src/recovery/stop-notice.js';
import { repoFile, section } from './readme-blocks.js';

const FLOW_NAMES = Object.keys(RECOVERY_FLOWS);

describe('recovery stops: one declaration, held to the registry and the ASL', () => {
  it.each(FLOW_NAMES.map((f) => [f] as const))(
    '%s: every Fail state of its ASL is classified, and nothing else',
    (flow) => {
      const fails = designedStopsByState(loadAsl(flow)).map((s) => s.state);
      expect(Object.keys(RECOVERY_FLOWS[flow]!.stops).sort()).toEqual(fails.sort());
    },
  );

  it('every flow the registry starts as a recovery is declared, and every declared flow is a STANDARD registry flow', () => {
    for (const by of FLOWS.flatMap((f) => (f.recovery ? [f.recovery.by] : []))) expect(FLOW_NAMES, by).toContain(by);
    for (const flow of FLOW_NAMES) expect(FLOWS.find((f) => f.name === flow)?.type, flow).toBe('STANDARD');
    // Only commit-generation has ordinary executions: every other declared flow's job is recovery.
    expect(FLOW_NAMES.filter((f) => RECOVERY_FLOWS[f]!.runs === 'dispatched')).toEqual(['commit-generation']);
  });

  it('a benign stop can be told apart: none of its errors also ends a paging stop of the same flow', () => {
    for (const flow of FLOW_NAMES) {
      const stops = designedStopsByState(loadAsl(flow));
      const paging = new Set(stops.filter((s) => RECOVERY_FLOWS[flow]!.stops[s.state]!.pages).flatMap((s) => s.errors));
      for (const benign of stops.filter((s) => !RECOVERY_FLOWS[flow]!.stops[s.state]!.pages)) {
        expect(
          benign.errors.filter((e) => paging.has(e)),
          `${flow} ${benign.state}`,
        ).toEqual([]);
      }
    }
  });

  it("what the dispatcher is told: the errors of the paging Fail states (a Refused state's caught errors too); nothing for other flows", () => {
    expect(recoveryStopsOf('stream-resolve-append', loadAsl('stream-resolve-append'))).toEqual({
      runs: 'always',
      subject: 'lane',
      pages: ['Stream.RecoveryExhausted', 'Stream.Unresolvable'],
      deterministic: ['Stream.RecoveryExhausted', 'Stream.Rejected', 'Stream.Unresolvable'],
    });
    expect(recoveryStopsOf('commit-generation', loadAsl('commit-generation'))).toEqual({
      runs: 'dispatched',
      subject: 'task',
      pages: ['Generation.Inconsistent', 'Generation.RecoveryExhausted', 'Generation.Rejected', 'Generation.Undecided'],
      deterministic: ['Generation.Inconsistent', 'Generation.RecoveryExhausted'],
    });
    const reconcile = recoveryStopsOf('delivery-reconcile', loadAsl('delivery-reconcile'))!;
    expect(reconcile).toMatchObject({ runs: 'always', subject: 'invocation' });
    expect(reconcile.pages).toEqual(
      expect.arrayContaining([
        'Delivery.ConfirmationRequired',
        'Delivery.RecoveryRetained',
        'Delivery.IncidentRetained',
        'Delivery.JournalUnavailable',
        'Delivery.CustodyHeld',
      ]),
    );
    // A step error a Refused state passes on may clear (custody held elsewhere), and an error it shares with a deterministic stop is not one a re-run cannot pass.
    expect(reconcile.deterministic).toEqual(['Delivery.IncidentRetained']);
    expect(recoveryStopsOf('stream-trim', loadAsl('stream-trim'))).toBeUndefined();
    expect(recoveryStopsOf('deliver-window', loadAsl('deliver-window'))).toBeUndefined();
  });

  it('a Fail state nobody classified fails the synthesis (infra reads the stops through recoveryStopsOf)', () => {
    const definition = loadAsl('stream-resolve-append');
    const drifted = {
      ...definition,
      States: { ...definition.States, Orphaned: { Type: 'Fail', Error: 'Stream.Orphaned' } },
    } as AslDefinition;
    expect(allStates(drifted).some((s) => s.state === 'Orphaned')).toBe(true);
    expect(() => recoveryStopsOf('stream-resolve-append', drifted)).toThrow(/Orphaned/);
  });

  it('the docs/operate.md "Recovery stops" table is the declaration, row for row', () => {
    const text = section(repoFile('docs/operate.md'), 'Recovery stops') ?? '';
    const rows = text
      .split('\n')
      .filter((l) => /^\| `[a-z-]+`/.test(l))
      .flatMap((line) => {
        const [flows = '', stop = '', meaning = '', pages = '', deterministic = ''] = line
          .split(' | ')
          .map((c) => c.replace(/^\| |\s*\|$/g, ''));
        const state = /^`([A-Za-z]+)`/.exec(stop)?.[1];
        return [...flows.matchAll(/`([a-z-]+)`/g)].map((m) => ({
          flow: m[1],
          state,
          meaning,
          pages: pages === 'yes',
          deterministic: deterministic === 'yes',
        }));
      });
    const declared = FLOW_NAMES.flatMap((flow) =>
      Object.entries(RECOVERY_FLOWS[flow]!.stops).map(([state, s]) => ({
        flow,
        state,
        meaning: s.meaning,
        pages: s.pages,
        deterministic: s.deterministic,
      })),
    );
    const key = (r: { flow?: string; state?: string }) => `${r.flow} ${r.state}`;
    expect([...rows].sort((a, b) => key(a).localeCompare(key(b)))).toEqual(
      [...declared].sort((a, b) => key(a).localeCompare(key(b))),
    );
  });
});

describe('the notice of a recovery stop', () => {
  const arn = (machine: string, name: string) => `arn:aws:states:eu-west-1:111111111111:execution:${machine}:${name}`;

  it('a lane: the lane and attempt of the input, and the resolve command; for a nested recovery, of the innermost input', () => {
    const own = recoveryStopNotice(
      'stream-resolve-append',
      'lane',
      { executionArn: arn('r', 'x'), error: 'Stream.Unresolvable' },
      JSON.stringify({ stream: 'orders', partition: 3, attemptId: 'a-7' }),
    );
    expect(own.message).toMatchObject({
      flow: 'stream-resolve-append',
      execution: arn('r', 'x'),
      stop: 'Stream.Unresolvable',
      concerns: { lane: 'orders/3', attemptId: 'a-7' },
      command: 'cutpoint stream resolve orders --partition 3 --attempt a-7 --aws',
    });
    expect(own.message).not.toHaveProperty('recovery_of');
    expect(own.subject).toBe('cutpoint: stream-resolve-append stopped with Stream.Unresolvable (orders/3)');
    const original = JSON.stringify({ stream: 'orders', partition: 3, attemptId: 'a-7' });
    const nested = JSON.stringify({
      recoveryOf: arn('r', 'second'),
      originalInput: JSON.stringify({ recoveryOf: arn('r', 'first'), originalInput: original }),
    });
    const exhausted = recoveryStopNotice(
      'stream-resolve-append',
      'lane',
      { executionArn: arn('r', 'third'), error: 'Stream.RecoveryExhausted' },
      nested,
    );
    expect(exhausted.message).toMatchObject({
      recovery_of: arn('r', 'second'),
      concerns: { lane: 'orders/3', attemptId: 'a-7' },
      command: 'cutpoint stream resolve orders --partition 3 --attempt a-7 --aws',
    });
  });

  it("a task: task id and generation, and the re-run of the original execution's input", () => {
    const input = JSON.stringify({
      recoveryOf: arn('cg', 'orig'),
      originalInput: JSON.stringify({ root: 'demo/x', generation: 2, taskId: 't-1', sources: [] }),
    });
    const notice = recoveryStopNotice(
      'commit-generation',
      'task',
      { executionArn: arn('cg', 'recover-orig'), error: 'Generation.Undecided' },
      input,
    );
    expect(notice.message).toMatchObject({
      recovery_of: arn('cg', 'orig'),
      concerns: { taskId: 't-1', generation: 2 },
    });
    expect(notice.message.command).toContain(`describe-execution --execution-arn ${arn('cg', 'orig')} `);
    expect(notice.message.command).toContain(
      'cutpoint flow run commit-generation --input @commit-generation.json --aws',
    );
  });

  it("an invocation: the operator's id, or for the automatic reconcile the one derived from the failed delivery; never the manifest or a session", () => {
    const operator = JSON.stringify({
      invocationId: 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa',
      manifestText: 'password: hunter2',
      selector: 'route.yaml#daily',
      yes: true,
      session: 'session-0123456789abcdef',
    });
    const byHand = recoveryStopNotice(
      'delivery-resume',
      'invocation',
      { executionArn: arn('dr', 'x'), error: 'Delivery.CustodyHeld' },
      operator,
    );
    expect(byHand.message).toMatchObject({
      stop: 'Delivery.CustodyHeld',
      concerns: { invocationId: 'inv-aaaaaaaaaaaaaaaaaaaaaaaaaa' },
      command: 'cutpoint delivery inspect inv-aaaaaaaaaaaaaaaaaaaaaaaaaa --format json --aws',
    });
    expect(JSON.stringify(byHand)).not.toMatch(/hunter2|session-0123/);
    const failed = arn('deliver-window', 'nightly');
    const automatic = JSON.stringify({
      recoveryOf: failed,
      originalInput: JSON.stringify({ manifestText: 'password: hunter2', selector: 'route.yaml#daily' }),
    });
    const derived = recoveryStopNotice(
      'delivery-reconcile',
      'invocation',
      { executionArn: arn('rc', 'recover-nightly'), error: 'Delivery.JournalUnavailable' },
      automatic,
    );
    expect(derived.message).toMatchObject({
      recovery_of: failed,
      concerns: { invocationId: invocationIdOfExecution(failed) },
    });
    expect(JSON.stringify(derived)).not.toContain('hunter2');
  });

  it('an input it cannot read still gives a notice, with placeholders where the ids would be', () => {
    const notice = recoveryStopNotice(
      'stream-resolve-append',
      'lane',
      { executionArn: arn('r', 'x'), error: 'Stream.RecoveryExhausted' },
      '{"recoveryOf":"arn:aws:states:eu-west-1:1:execution:r:y","originalInput":"{\\"strea',
    );
    expect(notice.message).toMatchObject({
      concerns: {},
      command: 'cutpoint stream resolve <stream> --partition <partition> --attempt <attempt> --aws',
    });
    expect(
      recoveryStopNotice(
        'delivery-retire',
        'invocation',
        { executionArn: arn('r', 'x'), error: 'Delivery.ConfirmationRequired' },
        '{}',
      ).message.command,
    ).toBe('cutpoint delivery inspect <invocation-id> --format json --aws');
  });
});
