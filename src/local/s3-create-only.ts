import type { buildApp } from 'fauxqs';

/**
 * What the local S3 emulator lacks and real S3 does: `If-None-Match: *` on PutObject and
 * CopyObject is a create-only write — 412 PreconditionFailed when the key holds an object,
 * 409 ConditionalRequestConflict while another create-only write of the key is in flight.
 * Without it a late writer (a zombie, a duplicate execution) silently replaced an immutable
 * object locally where S3 would have refused it, so local runs and tests saw a store S3 is
 * not. The check and the in-flight mark are one synchronous step, so two racing writes
 * cannot both pass.
 */

interface ObjectLookup {
  headObject(bucket: string, key: string): unknown;
}

type App = ReturnType<typeof buildApp>;
type Request = { method: string; url: string; headers: Record<string, string | string[] | undefined> };
type Reply = { code(status: number): Reply; type(contentType: string): Reply; send(body: string): unknown };

/** The create-only write a request is still making, by `bucket/key`. */
const inFlight = new WeakMap<object, string>();

export function enforceCreateOnly(app: App, objects: ObjectLookup): void {
  const pending = new Set<string>();
  app.addHook('preHandler', (request: Request, reply: Reply, done: (error?: Error) => void) => {
    const target = createOnlyTarget(request);
    if (!target) return done();
    const id = `${target.bucket}/${target.key}`;
    if (exists(objects, target.bucket, target.key))
      return void reply
        .code(412)
        .type('application/xml')
        .send(s3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', id));
    if (pending.has(id))
      return void reply
        .code(409)
        .type('application/xml')
        .send(
          s3Error(
            'ConditionalRequestConflict',
            'A conflicting conditional operation is currently in progress against this resource.',
            id,
          ),
        );
    pending.add(id);
    inFlight.set(request, id);
    done();
  });
  const settled = (request: Request, _reply: unknown, done: () => void): void => {
    const id = inFlight.get(request);
    if (id !== undefined) pending.delete(id);
    done();
  };
  app.addHook('onResponse', settled);
  app.addHook('onRequestAbort', (request: Request, done: () => void) => settled(request, undefined, done));
}

/** A path-style PUT of a whole object (not a multipart part) with `If-None-Match: *`. */
function createOnlyTarget(request: Request): { bucket: string; key: string } | undefined {
  if (request.method !== 'PUT' || request.headers['if-none-match'] !== '*') return undefined;
  const url = new URL(request.url, 'http://local');
  if (url.searchParams.has('partNumber') || url.searchParams.has('uploadId')) return undefined;
  const [, bucket, ...rest] = url.pathname.split('/');
  if (!bucket || rest.length === 0) return undefined;
  return { bucket: decodeURIComponent(bucket), key: rest.map(decodeURIComponent).join('/') };
}

function exists(objects: ObjectLookup, bucket: string, key: string): boolean {
  try {
    objects.headObject(bucket, key);
    return true;
  } catch {
    return false; // NoSuchKey (or NoSuchBucket, which the action itself reports)
  }
}

function s3Error(code: string, message: string, resource: string): string {
  const escape = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escape(message)}</Message><Resource>/${escape(resource)}</Resource></Error>`;
}
