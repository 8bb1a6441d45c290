import { beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/domain/digest.js';
import { generationKeys } from '../../src/domain/generation.js';
import { runFlow } from '../../src/local/flow-runner.js';
import { freshStores, type TestStores } from '../support/emulators.js';

let stores: TestStores;

beforeAll(async () => {
  stores = await freshStores();
});

async function source(key: string, text: string) {
  const bytes = new TextEncoder().encode(text);
  const sha256 = sha256Hex(bytes);
  await stores.ports.objects.put('test.source.put', key, bytes, { sha256 });
  return { key, sha256, size: bytes.byteLength };
}

describe('commit-generation flow (no faults)', () => {
  it('commits one generation whose bytes are the verified sources, in order', async () => {
    const a = await source('sources/a', 'alpha\n');
    const b = await source('sources/b', 'beta\n');
    const input = { root: 'demo/plain', generation: 0, taskId: 'task-1', sources: [a, b] };
    const result = await runFlow('commit-generation', input, { ports: stores.ports, retryIntervalMs: 0 });
    expect(result.status).toBe('SUCCEEDED');
    const output = result.output as Record<string, unknown>;
    expect(output.outcome).toBe('COMMITTED');
    expect(output.sha256).toBe(sha256Hex('alpha\nbeta\n'));
    const head = await stores.ports.authority.get(generationKeys.head('demo/plain'));
    expect(head?.generation).toBe(0);
    expect(head?.taskId).toBe('task-1');
    expect(result.transitions).toBeGreaterThan(4);
  });
});

describe('commit-generation recovery entry (EventBridge re-run)', () => {
  it('unwraps {recoveryOf, originalInput} and finishes the original task', async () => {
    const a = await source('sources/r1', 'one\n');
    const input = { root: 'demo/recovery', generation: 0, taskId: 'task-r', sources: [a] };
    const result = await runFlow(
      'commit-generation',
      { recoveryOf: 'arn:exec:1', originalInput: JSON.stringify(input) },
      { ports: stores.ports, retryIntervalMs: 0 },
    );
    expect(result.output).toMatchObject({ outcome: 'COMMITTED', taskId: 'task-r' });
  });

  it('a recovery of a recovery escalates instead of looping', async () => {
    const nested = {
      recoveryOf: 'arn:exec:2',
      originalInput: JSON.stringify({ recoveryOf: 'arn:exec:1', originalInput: '{}' }),
    };
    const result = await runFlow('commit-generation', nested, { ports: stores.ports, retryIntervalMs: 0 });
    expect(result).toMatchObject({ status: 'FAILED', error: 'Generation.RecoveryExhausted' });
  });

  it('counts state transitions as AWS bills them: states entered plus retries', async () => {
    const a = await source('sources/t1', 'transitions\n');
    const input = { root: 'demo/transitions', generation: 0, taskId: 'task-t', sources: [a] };
    // One source: WriteObject copies it server-side (generation.object.copy), never a PUT.
    stores.faults.arm('generation.object.copy:crash-before');
    const result = await runFlow('commit-generation', input, { ports: stores.ports, retryIntervalMs: 0 });
    stores.faults.disarm();
    // IsRecovery, Init, RegisterTask, WriteObject (+1 retry), RecordPrepared, Commit, CleanupTask, Committed
    expect(result.transitions).toBe(9);
  });
});
