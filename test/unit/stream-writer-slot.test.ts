import { describe, expect, it } from 'vitest';
import type { Ports } from '../../src/ports/index.js';
import { holdsSlot, validateWriterId, writerAgainst, writerOfAttempt } from '../../src/stream/append/writer-slot.js';
import { resolveLane } from '../../src/stream/resolve-lane.js';

/** Who the writer slot (src/stream/append/writer-slot.ts) refuses, decided from the head alone. */
describe('the writer slot', () => {
  const slot = { id: '3f9c1a7e', epoch: 2, claimedAt: '2024-01-01T00:00:00.000Z' };

  it('knows a LaneWriter attempt id by its exact form w<8 hex>.e<epoch>.<seq>', () => {
    expect(writerOfAttempt('w3f9c1a7e.e2.t1765100000000.17')).toBe('3f9c1a7e');
    expect(writerOfAttempt('w3f9c1a7e.e2.17'), 'an id minted before time marks').toBe('3f9c1a7e');
    for (const other of [
      'a1',
      'w3f9c1a7e',
      'w3f9c1a7e.e2',
      'w3f9c1a7e.e2.x',
      'w3f9c1a7e.e2.t17651.1',
      'w3F9C1A7E.e2.1',
      'x3f9c1a7e.e2.1',
      'w3f9c1a7e0.e2.1',
    ])
      expect(writerOfAttempt(other), other).toBeUndefined();
  });

  it("refuses every attempt but its writer's own; once a resolve marked it, those too", () => {
    expect(writerAgainst({}, 'a1')).toBeUndefined();
    expect(writerAgainst({ writer: slot }, 'a1')).toBe('3f9c1a7e');
    expect(writerAgainst({ writer: slot }, 'wdeadbeef.e2.1')).toBe('3f9c1a7e');
    expect(writerAgainst({ writer: slot }, 'w3f9c1a7e.e2.1')).toBeUndefined();
    expect(writerAgainst({ writer: { ...slot, resolvingSince: '2024-01-01T00:01:00.000Z' } }, 'w3f9c1a7e.e2.1')).toBe(
      '3f9c1a7e',
    );
    expect(holdsSlot({ writer: slot }, '3f9c1a7e')).toBe(true);
    expect(holdsSlot({ writer: { ...slot, resolvingSince: '2024-01-01T00:01:00.000Z' } }, '3f9c1a7e')).toBe(false);
    expect(holdsSlot({}, '3f9c1a7e')).toBe(false);
  });

  it('a writer id is exactly 8 lowercase hex digits (stream.invalid_writer otherwise)', () => {
    expect(validateWriterId('3f9c1a7e')).toBe('3f9c1a7e');
    for (const bad of ['w3f9c1a7e', '3F9C1A7E', '3f9c1a7', '3f9c1a7e0', '', 7, undefined]) {
      expect(() => validateWriterId(bad), String(bad)).toThrow(
        expect.objectContaining({ name: 'Cutpoint.ValidationError', code: 'stream.invalid_writer' }),
      );
    }
  });

  it('resolve takes exactly one of attemptId and writerId, refused before anything is read', async () => {
    const untouchable = new Proxy(
      {},
      {
        get: () => {
          throw new Error('test bug: the refusal read the stores');
        },
      },
    ) as Ports;
    for (const input of [
      { stream: 'orders', partition: 0 },
      { stream: 'orders', partition: 0, attemptId: 'a1', writerId: '3f9c1a7e' },
    ]) {
      await expect(resolveLane(input, untouchable), JSON.stringify(input)).rejects.toMatchObject({
        code: 'stream.invalid_resolve',
      });
    }
  });
});
