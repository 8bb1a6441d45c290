import type { ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseHandle } from '../../src/adapters/clickhouse/client.js';

/**
 * A ClickHouse handle that records every statement it sends (`client.query` and
 * `streamLines`) in `sent`, and passes everything through to the real handle; closing it
 * leaves the real handle open.
 */
export function spyHandle(handle: ClickHouseHandle, sent: string[]): ClickHouseHandle {
  const client = new Proxy(handle.client, {
    get(target, property) {
      if (property === 'query') {
        return (params: Parameters<ClickHouseClient['query']>[0]) => {
          sent.push(params.query);
          return target.query(params);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    client,
    streamLines: (statement, signal) => {
      sent.push(statement.query);
      return handle.streamLines(statement, signal);
    },
    close: async () => {},
  };
}
