/**
 * Runs `work` once per item, at most `limit` at a time, in item order as slots free up;
 * the first failure is thrown once every started call has settled (no call is left
 * running behind the caller's back). The one bounded fan-out of the code base: the parts
 * of a window in process, their verification and quality probes, the local runner's Map
 * items.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  limit: number,
  work: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const index = next++;
      try {
        await work(items[index] as T, index);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  if (failed) throw failed.error;
}
