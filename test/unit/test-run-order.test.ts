import { describe, expect, it } from 'vitest';
import { runOrder } from '../support/duration-sequencer.js';

const file = (project: string, name: string, seconds: number) => ({ project, name, seconds });
const order = (files: ReturnType<typeof file>[]) =>
  runOrder(
    files,
    (f) => f.project,
    (f) => f.seconds,
  ).map((f) => `${f.project}:${f.name}`);

describe("npm test's file order (test/support/duration-sequencer.ts)", () => {
  it("keeps each project's files together (vitest keeps a worker only for the same project's next file), the heaviest project first", () => {
    const files = [
      file('unit', 'u1', 1),
      file('integration', 'i1', 50),
      file('infra', 'f1', 9),
      file('integration', 'i2', 2),
      file('unit', 'u2', 3),
      file('infra', 'f2', 4),
    ];
    expect(order(files)).toEqual(['integration:i1', 'integration:i2', 'infra:f1', 'infra:f2', 'unit:u2', 'unit:u1']);
  });

  it('runs the longest file of a project first, and orders projects of equal weight by name', () => {
    const files = [file('b', 'short', 1), file('a', 'x', 2), file('b', 'long', 1.5), file('a', 'y', 0.5)];
    expect(order(files)).toEqual(['a:x', 'a:y', 'b:long', 'b:short']);
  });
});
