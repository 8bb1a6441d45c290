/**
 * The deterministic output of a task: its verified sources, concatenated in order. Any
 * worker, at any time, computes the same bytes from the same durable task, which is
 * what makes staging disposable and a lost PUT resolvable by exact identity.
 */
export function materialize(sources: readonly Uint8Array[]): Uint8Array {
  const size = sources.reduce((n, s) => n + s.byteLength, 0);
  const out = new Uint8Array(size);
  let offset = 0;
  for (const source of sources) {
    out.set(source, offset);
    offset += source.byteLength;
  }
  return out;
}
