import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import {
  openHostEngine,
  asEngineError,
  type HostEngine,
  type HostExecution,
} from '../adapters/clickhouse/host-engine.js';
import {
  errorBody,
  exceptionBlock,
  httpStatusOf,
  newExceptionTag,
  responseFormatOf,
  parseRequest,
  ProtocolError,
} from './clickhouse-host-protocol.js';

/**
 * Child entry of the local ClickHouse host (started by clickhouse-host.ts): embedded
 * ClickHouse (chdb) bound to the data directory in argv[2], served over the subset of the
 * ClickHouse HTTP interface that @clickhouse/client 1.23 uses, on 127.0.0.1 and a port the
 * OS picks. Announces itself with one JSON line on stdout (`{"port":N}`, or
 * `{"error":..}` when the engine cannot open the directory), then stays quiet: no query
 * text, value or error message is ever logged.
 *
 * - SELECT-like statements stream block by block (chdb queryStream); memory is one block
 *   per request whatever the result size, and a slow client slows the engine (backpressure).
 *   An error before the first block is a proper error response (non-2xx status,
 *   `X-ClickHouse-Exception-Code`, body `Code: N. DB::Exception: … (TYPE)`); an error
 *   after it ends the body with ClickHouse's tagged exception block and the connection
 *   is dropped without the final chunk, so no client can take the rows as complete.
 * - Other statements (DDL, INSERT, EXCHANGE, SET…) run single-shot and answer once they
 *   are done, with `X-ClickHouse-Summary`. An insert's body is held whole (O(body)).
 * - A client that goes away mid-stream stops the stream at the next block boundary. A
 *   single-shot statement cannot be interrupted: chdb has no KILL for it, so it runs to
 *   its end inside this process (remote termination of an abandoned query is UNVERIFIED,
 *   as with a server where the client did not issue KILL QUERY).
 * - Stops on SIGTERM/SIGINT, or when its stdin closes (the parent died): drops open
 *   connections, waits for native work to drain so the directory is free, exits 0.
 */

async function main(): Promise<void> {
  const dataDir = process.argv[2];
  if (dataDir === undefined || dataDir === '') {
    announce({ error: 'usage', message: 'clickhouse-host-server <dataDir>' });
    process.exit(2);
  }
  let engine: HostEngine;
  try {
    engine = await openHostEngine(dataDir);
  } catch (error) {
    const busy = (error as { name?: unknown } | null)?.name === 'ChdbConnectionError';
    announce({
      error: busy ? 'busy' : 'failed',
      message: busy ? 'the data directory is held by another process' : asEngineError(error).message,
    });
    process.exit(1);
  }
  const server = createServer((req, res) => {
    handle(engine, req, res).catch(() => res.destroy());
  });
  server.keepAliveTimeout = 10_000;
  await listen(server);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('unexpected listen address');
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopping ??= (async () => {
      server.close();
      server.closeAllConnections();
      await engine.close();
      process.exit(0);
    })());
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
  // Lifeline: the parent holds our stdin; when it dies, the pipe closes and we go too.
  process.stdin.on('close', () => void stop());
  process.stdin.on('end', () => void stop());
  process.stdin.resume();
  announce({ port: address.port, pid: process.pid });
}

function announce(message: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
}

async function handle(engine: HostEngine, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const method = req.method ?? 'GET';
  const isRead = method === 'GET' || method === 'HEAD';
  if (url.pathname === '/ping' || (url.pathname === '/' && isRead && !url.searchParams.has('query'))) {
    req.resume();
    res.writeHead(200, { 'Content-Type': 'text/html; charset=UTF-8' }).end('Ok.\n');
    return;
  }
  if (url.pathname !== '/' || !(isRead || method === 'POST')) {
    req.resume();
    res
      .writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' })
      .end('There is no handle ' + url.pathname + '\n');
    return;
  }
  const body = await readBody(req);
  if (body === undefined) return; // the client went away while sending
  let execution: HostExecution;
  let queryId: string;
  let format: string;
  try {
    const request = parseRequest(method, url.searchParams, body);
    queryId = request.queryId ?? randomUUID();
    format = responseFormatOf(request.sql, request.defaultFormat);
    execution = await engine.execute({
      sql: request.sql,
      settings: request.settings,
      params: request.params,
      ...(request.database !== undefined ? { database: request.database } : {}),
      defaultFormat: request.defaultFormat,
    });
  } catch (error) {
    sendError(res, error, engine.version, url.searchParams.get('query_id') ?? undefined);
    return;
  }
  await respond(res, execution, { queryId, format, version: engine.version });
}

async function respond(
  res: ServerResponse,
  execution: HostExecution,
  meta: { queryId: string; format: string; version: string },
): Promise<void> {
  let gone = false;
  res.once('close', () => {
    if (!res.writableFinished) {
      gone = true;
      execution.cancel();
    }
  });
  let first: IteratorResult<Uint8Array>;
  try {
    first = await execution.chunks.next();
  } catch (error) {
    sendError(res, error, meta.version, meta.queryId);
    return;
  }
  const tag = newExceptionTag();
  res.writeHead(200, {
    'Content-Type': contentTypeOf(meta.format),
    'X-ClickHouse-Query-Id': meta.queryId,
    'X-ClickHouse-Format': meta.format,
    'X-ClickHouse-Timezone': 'UTC',
    'X-ClickHouse-Summary': JSON.stringify(execution.summary()),
    ...(execution.streamed ? { 'X-ClickHouse-Exception-Tag': tag } : {}),
  });
  let step = first;
  try {
    while (!step.done && !gone) {
      if (!res.write(step.value)) await drained(res);
      if (gone) break;
      step = await execution.chunks.next();
    }
  } catch (error) {
    if (!gone) {
      // Headers are out: the status cannot change. The body ends with the tagged exception
      // block and the response is finished normally, so a client reads every byte before
      // the error (closing the connection instead would let a slow reader's buffered
      // bytes, the block among them, be discarded as a bare ECONNRESET).
      res.end(exceptionBlock(asEngineError(error).message, tag));
    }
    return;
  }
  if (gone) return;
  res.end();
}

function sendError(res: ServerResponse, error: unknown, version: string, queryId: string | undefined): void {
  const failure = error instanceof ProtocolError ? error : asEngineError(error);
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  res.writeHead(httpStatusOf(failure.clickhouseCode), {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Exception-Code': String(failure.clickhouseCode),
    ...(queryId !== undefined ? { 'X-ClickHouse-Query-Id': queryId } : {}),
  });
  res.end(errorBody(failure.message, version));
}

function contentTypeOf(format: string): string {
  return /^JSON/i.test(format) ? 'application/json; charset=UTF-8' : 'text/plain; charset=UTF-8';
}

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const parts: Buffer[] = [];
  try {
    for await (const part of req) parts.push(part as Buffer);
  } catch {
    return undefined;
  }
  return Buffer.concat(parts);
}

async function drained(res: ServerResponse): Promise<void> {
  const controller = new AbortController();
  await Promise.race([
    once(res, 'drain', { signal: controller.signal }),
    once(res, 'close', { signal: controller.signal }),
  ]).catch(() => undefined);
  controller.abort();
}

await main();
