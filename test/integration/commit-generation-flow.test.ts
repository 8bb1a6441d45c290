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
