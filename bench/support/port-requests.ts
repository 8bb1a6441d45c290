import type { AuthorityStore } from '../../src/ports/authority.js';
import type { Ports } from '../../src/ports/index.js';
import type { ObjectStore } from '../../src/ports/objects.js';

/**
 * Port decorators for the benches: every call on the authority or object store port is
 * one provider request, named as AWS bills it (`dynamodb.GetItem`, `s3.PutObject`), and
 * `before(request)` runs ahead of delegating (counting it, or sleeping to inject latency).
 */
export type BeforeRequest = (request: string) => void | Promise<void>;

export function decoratePorts(ports: Ports, before: BeforeRequest): Ports {
  const a = ports.authority;
  const o = ports.objects;
  const via = async <T>(request: string, call: () => Promise<T>): Promise<T> => {
    await before(request);
    return call();
  };
  const authority: AuthorityStore = {
    describeBinding: () => via('dynamodb.DescribeTable', () => a.describeBinding()),
    get: (key) => via('dynamodb.GetItem', () => a.get(key)),
    getTogether: (keys) => via('dynamodb.TransactGetItems', () => a.getTogether(keys)),
    query: (pk, prefix, options) => via('dynamodb.Query', () => a.query(pk, prefix, options)),
    put: (cut, item, expect) => via('dynamodb.PutItem', () => a.put(cut, item, expect)),
    update: (cut, key, expect, set) => via('dynamodb.UpdateItem', () => a.update(cut, key, expect, set)),
    delete: (cut, key, expect) => via('dynamodb.DeleteItem', () => a.delete(cut, key, expect)),
    transact: (cut, legs) => via('dynamodb.TransactWriteItems', () => a.transact(cut, legs)),
  };
  const objects: ObjectStore = {
    location: o.location,
    put: (cut, key, bytes, metadata) => via('s3.PutObject', () => o.put(cut, key, bytes, metadata)),
    copy: (cut, source, target, metadata) => via('s3.CopyObject', () => o.copy(cut, source, target, metadata)),
    head: (key) => via('s3.HeadObject', () => o.head(key)),
    get: (key) => via('s3.GetObject', () => o.get(key)),
    delete: (cut, key) => via('s3.DeleteObject', () => o.delete(cut, key)),
    deleteMany: (cut, keys) => via('s3.DeleteObjects', () => o.deleteMany(cut, keys)),
    list: (prefix) => via('s3.ListObjectsV2', () => o.list(prefix)),
  };
  return { ...ports, authority, objects };
}

/** Counts port requests by kind. */
export class RequestCounter {
  private readonly counts = new Map<string, number>();

  wrap(ports: Ports): Ports {
    return decoratePorts(ports, (request) => {
      this.counts.set(request, (this.counts.get(request) ?? 0) + 1);
    });
  }

  snapshot(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort(([x], [y]) => x.localeCompare(y)));
  }
}

/**
 * AWS-like latency per request (milliseconds, in-region, small items and objects): what
 * makes an S3 PUT cost many conditional writes on AWS while locally it costs about one.
 */
export const AWS_LIKE_LATENCY_MS: Readonly<Record<string, number>> = {
  's3.PutObject': 50,
  's3.CopyObject': 50,
  's3.GetObject': 20,
  's3.HeadObject': 20,
  's3.ListObjectsV2': 20,
  's3.DeleteObject': 20,
  'dynamodb.GetItem': 5,
  'dynamodb.PutItem': 5,
  'dynamodb.UpdateItem': 5,
  'dynamodb.DeleteItem': 5,
  'dynamodb.Query': 5,
  'dynamodb.DescribeTable': 5,
  'dynamodb.TransactWriteItems': 8,
  'dynamodb.TransactGetItems': 8,
};

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Sleeps the request's latency before every port call. */
export function withLatency(ports: Ports, latencyMs: Readonly<Record<string, number>> = AWS_LIKE_LATENCY_MS): Ports {
  return decoratePorts(ports, async (request) => {
    const ms = latencyMs[request];
    if (ms === undefined) throw new Error(`bench bug: no latency for ${request}`);
    await sleep(ms);
  });
}
