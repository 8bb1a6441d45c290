import { readdirSync } from 'node:fs';
import { StateMachine } from 'aws-local-stepfunctions';
import { describe, expect, it } from 'vitest';
import { FLOWS, STEPS, stepByPlaceholder } from '../../functions/registry.js';
import { loadAsl, REPO_ROOT, taskStates } from '../../src/local/asl.js';

const files = readdirSync(`${REPO_ROOT}statemachines`).filter((f) => f.endsWith('.asl.json'));

describe('statemachines/*.asl.json', () => {
  it('every ASL file is a registered flow and every flow has its file', () => {
    expect(files.map((f) => f.replace('.asl.json', '')).sort()).toEqual(FLOWS.map((f) => f.name).sort());
  });

  it('placeholders match the registry one to one', () => {
    const used = new Set(FLOWS.flatMap((f) => taskStates(loadAsl(f.name)).map((t) => t.placeholder)));
    expect([...used].sort()).toEqual(STEPS.map((s) => s.placeholder).sort());
  });

  describe.each(FLOWS.map((f) => [f.name]))('%s', (flow) => {
    const definition = loadAsl(flow);
    const text = JSON.stringify(definition);

    it('is valid ASL (JSONPath only, as the local runner and AWS both accept)', () => {
      const withArns = JSON.parse(text.replace(/\$\{([A-Za-z0-9]+)\}/g, 'arn:aws:lambda:us-east-1:000000000000:function:$1'));
      expect(() => new StateMachine(withArns)).not.toThrow();
      expect(text).not.toMatch(/"QueryLanguage"\s*:\s*"JSONata"/);
    });

    it('holds placeholders, never ARNs', () => {
      expect(text).not.toMatch(/arn:aws/);
      for (const { state, placeholder } of taskStates(definition)) {
        expect(placeholder, `${state} must use a \${placeholder}`).toBeDefined();
      }
    });

    it('retries or catches every error name each step declares, with no blanket States.ALL retry', () => {
      for (const { state, placeholder, definition: s } of taskStates(definition)) {
        const retried = (s.Retry ?? []).flatMap((r) => r.ErrorEquals);
        const caught = (s.Catch ?? []).flatMap((c) => c.ErrorEquals);
        expect(retried, `${state} retries States.ALL`).not.toContain('States.ALL');
        for (const error of stepByPlaceholder(placeholder!).errors) {
          expect([...retried, ...caught], `${state} neither retries nor catches ${error}`).toContain(error);
        }
        expect(s.TimeoutSeconds, `${state} needs a TimeoutSeconds`).toBeGreaterThan(0);
      }
    });

    it('every Next and Catch target exists, and every state is reachable', () => {
      const names = new Set(Object.keys(definition.States));
      const reached = new Set<string>([definition.StartAt]);
      for (const s of Object.values(definition.States)) {
        const targets = [
          s.Next as string | undefined,
          s.Default as string | undefined,
          ...((s.Choices as Array<{ Next: string }> | undefined) ?? []).map((c) => c.Next),
          ...(s.Catch ?? []).map((c) => c.Next),
        ].filter((t): t is string => typeof t === 'string');
        for (const t of targets) {
          expect(names.has(t), `unknown target ${t}`).toBe(true);
          reached.add(t);
        }
      }
      expect([...names].filter((n) => !reached.has(n))).toEqual([]);
    });
  });
});

describe('timeouts', () => {
  it.each(FLOWS.map((f) => [f.name]))('%s: every Task outlasts its Lambda, so a Lambda timeout surfaces as a retried error', (flow) => {
    const definition = loadAsl(flow);
    for (const { state, placeholder, definition: s } of taskStates(definition)) {
      const lambda = stepByPlaceholder(placeholder!).timeoutSeconds;
      expect(s.TimeoutSeconds as number, state).toBeGreaterThan(lambda);
      const retried = (s.Retry ?? []).flatMap((r) => r.ErrorEquals);
      expect(retried, state).toEqual(expect.arrayContaining(['Sandbox.Timedout', 'States.Timeout']));
    }
  });
});
