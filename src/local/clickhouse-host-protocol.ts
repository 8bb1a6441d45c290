import { randomBytes } from 'node:crypto';

/**
 * The ClickHouse HTTP interface, the part @clickhouse/client 1.23 speaks, as pure rules:
 * how a request's URL parameters and body become one statement, and how a failure is
 * written back. No I/O here; the server (clickhouse-host-server.ts) does the sockets.
 *
 * Request (clickhouse-js node_base_connection.ts / client-common url.ts):
 * - `query` (URL) and the body are the statement: with both, `query + "\n" + body` (an
 *   INSERT line in the URL, its data in the body), as the server concatenates them;
 *   with only a body, the body; with only `query` (GET), the query.
 * - `param_<name>`: query parameters for `{name:Type}`, text form as sent.
 * - `database`, `query_id`, `default_format`; every other parameter is a setting, except
 *   the HTTP-layer ones below (compression, progress headers, buffering), which only
 *   shape the HTTP response and are dropped. `session_id` is refused: the host keeps no
 *   HTTP sessions (cutpoint does not use them).
 * - Auth (`Authorization: Basic …`, `X-ClickHouse-User/Key`) is accepted and ignored: the
 *   host listens on loopback only.
 */

/** URL parameters that belong to the HTTP layer, not to the query. */
const HTTP_LAYER = new Set([
  'query_id',
  'default_format',
  'database',
  'user',
  'password',
  'quota_key',
  'compress',
  'decompress',
  'buffer_size',
  'wait_end_of_query',
  'enable_http_compression',
  'send_progress_in_http_headers',
  'http_zlib_compression_level',
  'http_native_compression_disable_checksumming_on_decompress',
  'http_response_buffer_size',
  'http_headers_progress_interval_ms',
  'http_wait_end_of_query',
  'http_write_exception_in_output_format',
  'http_exception_tagging',
  'role',
  'session_timeout',
  'session_check',
]);

const SERVER_DEFAULTS: ReadonlyArray<readonly [string, string]> = [['output_format_json_quote_64bit_integers', '1']];

export interface ParsedRequest {
  sql: string;
  settings: Array<[string, string]>;
  params: Array<[string, string]>;
  database?: string;
  queryId?: string;
  defaultFormat: string;
}

export class ProtocolError extends Error {
  readonly clickhouseCode: number;
  constructor(clickhouseCode: number, type: string, message: string) {
    super(`Code: ${clickhouseCode}. DB::Exception: ${message}. (${type})`);
    this.name = 'ProtocolError';
    this.clickhouseCode = clickhouseCode;
  }
}

/** The statement a request carries, or a ProtocolError a server would answer with. */
export function parseRequest(method: string, search: URLSearchParams, body: Buffer): ParsedRequest {
  if (search.has('session_id')) {
    throw new ProtocolError(
      48,
      'NOT_IMPLEMENTED',
      'HTTP sessions (session_id) are not supported by the local ClickHouse host',
    );
  }
  const query = search.get('query');
  const text = body.length > 0 ? body.toString('utf8') : '';
  const sql = query !== null && text !== '' ? `${query}\n${text}` : (query ?? text);
  if (sql.trim() === '') throw new ProtocolError(62, 'SYNTAX_ERROR', 'Empty query');
  const settings: Array<[string, string]> = [];
  const params: Array<[string, string]> = [];
  for (const [name, value] of search) {
    if (name === 'query') continue;
    if (name.startsWith('param_')) params.push([name.slice('param_'.length), value]);
    else if (!HTTP_LAYER.has(name)) settings.push([name, value]);
  }
  // Server defaults where embedded ClickHouse differs (a request may still set its own):
  // a server quotes 64-bit integers in JSON formats, chdb does not.
  for (const [name, value] of SERVER_DEFAULTS) if (!settings.some(([n]) => n === name)) settings.unshift([name, value]);
  // A GET is read-only on a server (readonly=2: reads and SETs only) unless it says otherwise.
  if (method === 'GET' && !settings.some(([n]) => n === 'readonly')) settings.push(['readonly', '2']);
  const database = search.get('database') ?? undefined;
  const queryId = search.get('query_id') ?? undefined;
  return {
    sql,
    settings,
    params,
    ...(database !== undefined ? { database } : {}),
    ...(queryId !== undefined ? { queryId } : {}),
    defaultFormat: search.get('default_format') ?? 'TabSeparated',
  };
}

/** The output format the response will carry: the statement's trailing FORMAT, else the default. */
export function responseFormatOf(sql: string, defaultFormat: string): string {
  // Only the last line matters for a SELECT the client built (`<query> \nFORMAT X`); an
  // INSERT's FORMAT names its input, not its output, and is skipped.
  if (/^\s*INSERT\b/i.test(sql)) return defaultFormat;
  const match = /\bFORMAT\s+([A-Za-z][A-Za-z0-9_]*)\s*;?\s*$/i.exec(sql);
  return match?.[1] ?? defaultFormat;
}

/**
 * The HTTP status a server answers an exception code with (ClickHouse
 * exceptionCodeToHTTPStatus, abridged to the codes a query here can raise); the client
 * reads only "not 2xx", the code and the type.
 */
export function httpStatusOf(code: number): number {
  if (BAD_REQUEST.has(code)) return 400;
  if (NOT_FOUND.has(code)) return 404;
  if (code === 48) return 501; // NOT_IMPLEMENTED
  return 500;
}

// CANNOT_PARSE_TEXT, _ESCAPE_SEQUENCE, _QUOTED_STRING, _INPUT_ASSERTION_FAILED, _DATE,
// _DATETIME, _NUMBER, TYPE_MISMATCH, SYNTAX_ERROR, INCORRECT_DATA, BAD_QUERY_PARAMETER,
// UNKNOWN_QUERY_PARAMETER.
const BAD_REQUEST = new Set([6, 25, 26, 27, 38, 41, 72, 53, 62, 117, 456, 457]);
// UNKNOWN_FUNCTION, _IDENTIFIER, _TYPE, _STORAGE, _TABLE, _AGGREGATE_FUNCTION, _FORMAT,
// _DATABASE, _SETTING.
const NOT_FOUND = new Set([46, 47, 50, 56, 60, 63, 73, 81, 115]);

/** The body of an error response: the engine's `Code: N. DB::Exception: … (TYPE)` text. */
export function errorBody(message: string, version: string): string {
  const text = message.trimEnd();
  return `${text}${text.includes('(version ') ? '' : ` (version ${version})`}\n`;
}

/** A fresh exception tag (`X-ClickHouse-Exception-Tag`): alphanumeric, as a server makes it. */
export function newExceptionTag(): string {
  return randomBytes(12)
    .toString('base64url')
    .replace(/[^A-Za-z0-9]/g, 'x');
}

/**
 * The bytes that end a response whose status was already sent: ClickHouse's tagged
 * exception block (25.11+), which clickhouse-js 1.23 recognises at the end of a chunk
 * and raises as the ClickHouseError it carries
 * (client-common utils/stream.ts extractErrorAtTheEndOfChunk):
 * `\r\n__exception__\r\n<tag>\r\n<message>\n<length> <tag>\r\n__exception__\r\n`, where
 * `<length>` counts the message and its newline in bytes.
 */
export function exceptionBlock(message: string, tag: string): Buffer {
  const text = `${message.trimEnd()}\n`;
  return Buffer.from(`\r\n__exception__\r\n${tag}\r\n${text}${Buffer.byteLength(text)} ${tag}\r\n__exception__\r\n`);
}
