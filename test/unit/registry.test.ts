import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { task } from '../../statemachines/spec/task.js';
import { needsFor, NEEDS_FIELDS, type HandlerNeeds } from '../../src/registry/handler-contract.js';
import { handlerPlaceholder, STEPS, stepByHandler, stepByPlaceholder } from '../../src/registry/index.js';

/*
 * The registry (src/registry/): every entry is named by its handler's path, from which its
 * CDK entry and its ASL placeholder are derived; every handler module keeps the one
 * contract (makeHandler(needs), handler); the runners hand a handler exactly the needs its
 * entry declares.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));

describe('registry entries', () => {
  it('derive the placeholder from the handler path: PascalCase of its segments + FunctionArn', () => {
    expect(handlerPlaceholder('delivery/begin')).toBe('DeliveryBeginFunctionArn');
    expect(handlerPlaceholder('stream/commit-head')).toBe('StreamCommitHeadFunctionArn');
    expect(handlerPlaceholder('stream/materialize-gen0')).toBe('StreamMaterializeGen0FunctionArn');
    expect(() => handlerPlaceholder('Delivery/Begin')).toThrow(/not a handler path/);
    expect(() => handlerPlaceholder('begin')).toThrow(/not a handler path/);
  });

  it('name an existing handler file each, once, and derive entry and placeholder from it', () => {
    expect(new Set(STEPS.map((s) => s.handler)).size).toBe(STEPS.length);
    for (const step of STEPS) {
      expect(step.entry).toBe(`functions/${step.handler}.ts`);
      expect(existsSync(`${root}${step.entry}`), step.entry).toBe(true);
      expect(step.placeholder).toBe(handlerPlaceholder(step.handler));
      expect(stepByPlaceholder(step.placeholder)).toBe(step);
      expect(stepByHandler(step.handler)).toBe(step);
    }
    expect(() => stepByHandler('delivery/no-such-step')).toThrow(
      /no registry step has the handler 'delivery\/no-such-step'/,
    );
  });

  it('load the module their handler path names, which keeps the one contract', async () => {
    for (const step of STEPS) {
      const loaded = await step.load();
      const byPath: unknown = await import(/* @vite-ignore */ pathToFileURL(`${root}${step.entry}`).href);
      expect(loaded, step.handler).toBe(byPath);
      expect(typeof loaded.makeHandler, step.handler).toBe('function');
      expect(typeof loaded.handler, step.handler).toBe('function');
      expect(
        Object.keys(loaded).filter((k) => /^make[A-Z]/.test(k) && k !== 'makeHandler'),
        step.handler,
      ).toEqual([]);
    }
  });

  it('derive what the Lambda may reach from needs: secrets for a delivery provider, the topic for a notifier', () => {
    for (const step of STEPS) {
      const scope = { 'delivery-source': 'source-and-target', 'delivery-target': 'target' }[step.needs as string];
      expect(step.readsSecrets, step.handler).toBe(scope);
      expect(step.notifies === true, step.handler).toBe(step.needs === 'ports-notifier');
    }
    expect(STEPS.filter((s) => s.needs === 'delivery-source').map((s) => s.handler)).toEqual([
      'delivery/begin',
      'delivery/plan-parts',
      'delivery/extract-load-part',
    ]);
  });
});

describe('needsFor', () => {
  const ports = () => Promise.reject(new Error('not built'));
  const delivery = () => Promise.reject(new Error('not built'));
  const notifier = () => Promise.reject(new Error('not built'));
  const all: HandlerNeeds = { ports, delivery, notifier };

  it('hands a handler exactly the needs its entry declares', () => {
    for (const step of STEPS)
      expect(Object.keys(needsFor(step, all)).sort(), step.handler).toEqual([...NEEDS_FIELDS[step.needs]].sort());
    expect(needsFor(stepByHandler('delivery/notify-incident'), all)).toEqual({ ports, notifier });
    expect(needsFor(stepByHandler('engine/check-flow-input'), all)).toEqual({});
  });

  it('refuses a declared need the caller lacks, naming the Task and the entry', () => {
    expect(() => needsFor(stepByHandler('delivery/publish'), { ports }, 'deliver-window: Task Publish')).toThrow(
      expect.objectContaining({
        name: 'Cutpoint.ConfigError',
        code: 'registry.need_unavailable',
        message: expect.stringMatching(
          /^deliver-window: Task Publish needs delivery .*functions\/delivery\/publish.*stepDeps/,
        ),
      }),
    );
    expect(() => needsFor(stepByHandler('delivery/notify-incident'), { ports })).toThrow(/needs notifier/);
  });
});

describe('a flow spec names a step by its handler path', () => {
  it('gets the derived placeholder as its Resource, and fails the generation on an unknown handler', () => {
    expect(task({ comment: 'c', lambda: 'delivery/quality' }).Resource).toBe('${DeliveryQualityFunctionArn}');
    expect(() => task({ comment: 'c', lambda: 'DeliveryQuality' })).toThrow(
      /no registry step has the handler 'DeliveryQuality'/,
    );
  });
});
