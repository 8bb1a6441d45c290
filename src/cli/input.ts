import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { quoted } from '../domain/echo.js';
import { CutpointError, ValidationError } from '../domain/errors.js';

/**
 * The one reader of operator input for every command: files named by `--manifest`,
 * `--file`, `--input @file`, and stdin. Refusals are stable diagnostics (exit 1), raised
 * before anything is touched:
 * - `cli.file_not_found`, `cli.file_permission_denied`: the path cannot be opened;
 * - `cli.file_not_regular`: a directory, FIFO, socket or device (a FIFO would block the
 *   command forever; it is opened non-blocking and refused after fstat);
 * - `cli.input_too_large`: more bytes than the input's limit (checked while reading — the
 *   bytes read, not the size a file reports — so a huge file, an endless one such as
 *   /proc/self/pagemap, or an endless stdin is never held in memory);
 * - `cli.input_too_deep`: JSON nested deeper than MAX_JSON_DEPTH.
 * Stdin is read as a stream (a pipe that is slow, non-blocking or larger than the pipe
 * buffer is read to its end, never `EAGAIN`).
 */

/** Size limits per kind of input, in bytes. */
export const INPUT_LIMITS = {
  /** Step Functions caps an execution's input at 256 KiB. */
  flowInput: 256 * 1024,
  manifest: 1024 * 1024,
  /** One append's records; the flow input (base64) is capped again at 256 KiB. */
  records: 1024 * 1024,
  /** `object put`: the object is hashed and PUT from memory. */
  object: 64 * 1024 * 1024,
  /** The AWS shared config and credentials files `--aws` reads (a few profiles). */
  awsSharedFile: 1024 * 1024,
} as const;

/** Bytes read from a file at a time (a multiple of 8: /proc files such as pagemap refuse other read sizes). */
const READ_CHUNK = 64 * 1024;

/** Deepest JSON nesting a flow input may have; no flow input needs more than a few levels. */
export const MAX_JSON_DEPTH = 64;

/** Where an input comes from: a file path, or `-` for stdin. */
export type InputSource = string;

/** Bytes of `source` (`-` or undefined: stdin), at most `limit`. `what` names the input in refusals. */
export function readInputBytes(source: InputSource | undefined, limit: number, what: string): Promise<Uint8Array> {
  return source === undefined || source === '-' ? readStdin(limit, what) : readInputFile(source, limit, what);
}

/** A regular file, at most `limit` bytes; anything else is refused without blocking. */
export async function readInputFile(path: string, limit: number, what: string): Promise<Uint8Array> {
  let handle: FileHandle;
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer forever.
    handle = await open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    throw fileError(path, what, error);
  }
  try {
    const into = cappedFile(await handle.stat(), path, limit, what);
    // The bytes actually read are capped, not the size stat reports: a file such as
    // /proc/self/pagemap says 0 and never ends.
    for (
      let chunk = Buffer.alloc(READ_CHUNK);
      into.add(chunk, (await handle.read(chunk, 0, READ_CHUNK, null)).bytesRead);
      chunk = Buffer.alloc(READ_CHUNK)
    );
    return into.bytes();
  } catch (error) {
    throw error instanceof CutpointError ? error : fileError(path, what, error);
  } finally {
    await handle.close();
  }
}

/**
 * A regular file of at most `limit` bytes, read chunk by chunk: refused when `stat` says it
 * is no regular file or too large, and again as soon as the chunks read pass the limit.
 * `add` takes a chunk and the bytes read into it (false at the end).
 */
function cappedFile(
  stat: Stats,
  path: string,
  limit: number,
  what: string,
): { add: (chunk: Buffer, read: number) => boolean; bytes: () => Uint8Array } {
  if (!stat.isFile()) throw notRegular(path, what, stat);
  if (stat.size > limit) throw tooLarge(what, limit, path);
  const chunks: Buffer[] = [];
  let size = 0;
  return {
    add(chunk, read) {
      if (read === 0) return false;
      size += read;
      if (size > limit) throw tooLarge(what, limit, path);
      chunks.push(chunk.subarray(0, read));
      return true;
    },
    bytes() {
      const bytes = Buffer.concat(chunks);
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    },
  };
}

/**
 * The same refusals, synchronously, for a file a synchronous rule reads (the AWS shared
 * config and credentials files, whose region `--aws` resolves in a sync path): undefined
 * when it does not exist; a FIFO, a device (`/dev/zero`) or more than `limit` bytes is
 * refused before — or while — reading, never waited on or held whole.
 */
export function readRegularFileSync(path: string, limit: number, what: string): Uint8Array | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw fileError(path, what, error);
  }
  try {
    const into = cappedFile(fstatSync(fd), path, limit, what);
    for (
      let chunk = Buffer.alloc(READ_CHUNK);
      into.add(chunk, readSync(fd, chunk, 0, READ_CHUNK, null));
      chunk = Buffer.alloc(READ_CHUNK)
    );
    return into.bytes();
  } catch (error) {
    throw error instanceof CutpointError ? error : fileError(path, what, error);
  } finally {
    closeSync(fd);
  }
}

/** Stdin to its end, as a stream, at most `limit` bytes. */
export async function readStdin(limit: number, what: string): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.byteLength;
    if (size > limit) {
      process.stdin.destroy();
      throw tooLarge(what, limit);
    }
    chunks.push(bytes);
  }
  const all = Buffer.concat(chunks);
  return new Uint8Array(all.buffer, all.byteOffset, all.byteLength);
}

/**
 * A JSON argument: inline text, `@file`, or `-` (stdin); at most `limit` bytes and
 * MAX_JSON_DEPTH levels. Unparsable JSON is `invalidCode`.
 */
export async function readJsonInput(
  value: string,
  options: { what: string; invalidCode: string; limit?: number },
): Promise<unknown> {
  const limit = options.limit ?? INPUT_LIMITS.flowInput;
  let text: string;
  if (value === '-' || value.startsWith('@')) {
    text = new TextDecoder().decode(await readInputBytes(value === '-' ? '-' : value.slice(1), limit, options.what));
  } else {
    if (Buffer.byteLength(value) > limit) throw tooLarge(options.what, limit);
    text = value;
  }
  return parseJsonBounded(text, options.what, options.invalidCode);
}

/**
 * JSON.parse after an iterative depth scan: a document nested deeper than `maxDepth` is
 * refused before anything recursive (the parser, the state-machine runner) sees it.
 */
export function parseJsonBounded(text: string, what: string, invalidCode: string, maxDepth = MAX_JSON_DEPTH): unknown {
  const depth = jsonDepth(text);
  if (depth > maxDepth) {
    throw new ValidationError('cli.input_too_deep', `${what} nests deeper than ${maxDepth} levels; nothing was run`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new ValidationError(invalidCode, `${what} is not valid JSON`);
  }
}

/** Deepest bracket nesting outside strings (stops counting once it exceeds any sane limit). */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

export function fileError(path: string, what: string, error: unknown): CutpointError {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new ValidationError(
        'cli.file_not_found',
        `${what}: no such file ${quoted(path)} (relative paths start at ${process.cwd()}); check the path`,
      );
    case 'EACCES':
    case 'EPERM':
      return new ValidationError(
        'cli.file_permission_denied',
        `${what}: ${quoted(path)} is not readable by this user; check its permissions`,
      );
    case 'EISDIR':
      return new ValidationError('cli.file_not_regular', `${what}: ${quoted(path)} is a directory, not a regular file`);
    default:
      return new ValidationError(
        'cli.file_unreadable',
        `${what}: ${quoted(path)} could not be read (${code ?? 'unknown error'})`,
      );
  }
}

export function notRegular(path: string, what: string, stat: Stats): CutpointError {
  const kind = stat.isDirectory()
    ? 'a directory'
    : stat.isFIFO()
      ? 'a FIFO (named pipe)'
      : stat.isSocket()
        ? 'a socket'
        : stat.isCharacterDevice() || stat.isBlockDevice()
          ? 'a device'
          : 'not a regular file';
  return new ValidationError(
    'cli.file_not_regular',
    `${what}: ${quoted(path)} is ${kind}, not a regular file; pass a regular file (pipes go to stdin, where the command takes stdin)`,
  );
}

function tooLarge(what: string, limit: number, path?: string): CutpointError {
  return new ValidationError(
    'cli.input_too_large',
    `${what}${path === undefined ? ' (stdin)' : ` ${quoted(path)}`} is larger than ${limit} bytes; nothing was run`,
  );
}
