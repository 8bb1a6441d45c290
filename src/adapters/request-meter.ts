/**
 * Counts provider requests per service and operation. On AWS the bill is state
 * transitions first, then requests: flows and benchmarks report both.
 */
export class RequestMeter {
  private readonly counts = new Map<string, number>();

  count(service: string, operation: string): void {
    const key = `${service}.${operation}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([a], [b]) => a.localeCompare(b)));
  }

  total(service?: string): number {
    let sum = 0;
    for (const [key, n] of this.counts) if (!service || key.startsWith(`${service}.`)) sum += n;
    return sum;
  }
}
