import fc from 'fast-check';
import type { FuzzCase } from '../support/fuzz-cli.js';
import { FORGED_PARTITION, STREAM, type FuzzWorld } from '../support/fuzz-world.js';
import { freshSuffix } from './arbitraries.js';

/**
 * The process boundary: records, objects and flow inputs piped on stdin to the real bin
 * (written at once or after a pause, small or past 64 KiB), each invalid (a reused
 * attempt with other records, an empty or oversize batch, an existing object key with
 * other bytes, a forged session); and a FIFO given as the manifest. Stdin is read as a
 * stream whatever its shape; a FIFO is refused, never waited on.
 */
export function stdinCases(world: FuzzWorld): fc.Arbitrary<FuzzCase> {
  const delay = fc.constantFrom(0, 0, 300);
  const text = (n: number, tag: string) =>
    new Uint8Array(Buffer.from(`${tag}\n`.repeat(Math.ceil(n / (tag.length + 1)))));
  const append = (partition: number, attempt: string) => [
    'stream',
    'append',
    STREAM,
    '--partition',
    String(partition),
    '--attempt',
    attempt,
  ];
  return fc.oneof(
    fc
      .tuple(fc.constantFrom(...world.committed), fc.constantFrom(10, 70_000), delay, freshSuffix)
      .map(([c, n, delayMs, sfx]): FuzzCase => ({
        what: `stdin reused attempt, other records: ${c.attemptId}, ${n} bytes after ${delayMs} ms`,
        argv: append(0, c.attemptId),
        stdin: { data: text(n, `other-${sfx}`), delayMs },
      })),
    delay.map((delayMs): FuzzCase => ({
      what: `stdin empty batch: after ${delayMs} ms`,
      argv: append(0, 'fz-empty-stdin'),
      stdin: { data: new Uint8Array(), delayMs },
    })),
    fc.tuple(freshSuffix, delay).map(([sfx, delayMs]): FuzzCase => ({
      what: `stdin oversize batch: 300 KB after ${delayMs} ms`,
      argv: append(0, `fz-${sfx}`),
      stdin: { data: text(300_000, 'big'), delayMs },
    })),
    fc.tuple(freshSuffix, fc.constantFrom(10, 70_000), delay).map(([sfx, n, delayMs]): FuzzCase => ({
      what: `stdin forged session: ${n} bytes after ${delayMs} ms`,
      argv: append(FORGED_PARTITION, `fz-${sfx}`),
      stdin: { data: text(n, 'forged'), delayMs },
    })),
    fc
      .tuple(fc.constantFrom(...world.objectKeys), fc.constantFrom(10, 70_000), delay)
      .map(([key, n, delayMs]): FuzzCase => ({
        what: `stdin object put existing key, other bytes: ${n} bytes after ${delayMs} ms`,
        argv: ['object', 'put', key],
        stdin: { data: text(n, 'overwrite'), delayMs },
      })),
    fc.tuple(freshSuffix, delay).map(([sfx, delayMs]): FuzzCase => ({
      what: `stdin flow input with a forged session: after ${delayMs} ms`,
      argv: ['flow', 'run', 'stream-append', '--input', '-'],
      stdin: {
        data: new Uint8Array(
          Buffer.from(
            JSON.stringify({
              stream: STREAM,
              partition: 0,
              attemptId: `fz-${sfx}`,
              session: { owner: 'fuzz-owner', session: `forged-${sfx}`, epoch: 1 },
              records: ['eA=='],
            }),
          ),
        ),
        delayMs,
      },
    })),
  );
}

/**
 * A FIFO (no writer) as --manifest: refused as not a regular file, never waited on. `run`
 * reads the manifest before it consults the journal, so no earlier case can make this
 * refusal come from somewhere else.
 */
export function fifoManifestCases(fifo: string): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom('daily', 'lossy').map((route) => ({
    what: `a FIFO as --manifest: delivery run #${route}`,
    argv: ['delivery', 'run', '--manifest', `${fifo}#${route}`],
    stdin: { data: new Uint8Array(), delayMs: 0 },
  }));
}
