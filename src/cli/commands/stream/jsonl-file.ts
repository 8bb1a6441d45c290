import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { quoted } from '../../../domain/echo.js';
import { CutpointError, ValidationError } from '../../../domain/errors.js';
import { MAX_RECORD_BYTES } from '../../../domain/stream.js';
import { fileError, notRegular } from '../../input.js';

const LF = 0x0a;
const CHUNK_BYTES = 1024 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A JSON Lines file read as a stream, never whole: each LF-terminated line is one record,
 * its exact bytes minus the LF (a last line without LF counts too). Every line must be one
 * JSON value in UTF-8 and at most MAX_RECORD_BYTES; `scan()` checks the whole file before
 * anything is appended, so a bad file mutates nothing. Memory is one chunk plus one line.
 */
export class JsonlFile {
  constructor(readonly path: string) {}

  /**
   * Records and bytes of a valid file; refuses a missing, non-regular, empty or malformed
   * one — and, read no further than needed, one that would take more than `bound.groups`
   * groups of at most `bound.records` records and `bound.bytes` bytes each
   * (`stream.file_too_large`): one command commits a bounded number of groups.
   */
  async scan(bound?: { groups: number; records: number; bytes: number }): Promise<{ records: number; bytes: number }> {
    let records = 0;
    let bytes = 0;
    for await (const line of this.lines()) {
      records++;
      bytes += line.byteLength;
      if (bound && (records > bound.groups * bound.records || bytes > bound.groups * bound.bytes)) {
        throw new ValidationError(
          'stream.file_too_large',
          `${JSON.stringify(this.path)} needs more than ${bound.groups} groups of at most ${bound.records} records and ${bound.bytes} bytes (read up to line ${records}); raise --max-records/--max-bytes or split the file; nothing was appended`,
        );
      }
    }
    if (records === 0) throw new ValidationError('stream.empty_batch', `no records: ${quoted(this.path)} is empty`);
    return { records, bytes };
  }

  /** The file's records in order, each checked (the file may have changed since `scan`). */
  async *lines(): AsyncGenerator<Uint8Array> {
    const handle = await this.openRegular();
    try {
      let carry: Buffer[] = [];
      let carried = 0;
      let line = 0;
      const emit = (bytes: Buffer): Uint8Array => checkedRecord(bytes, ++line);
      for await (const chunk of handle.createReadStream({
        highWaterMark: CHUNK_BYTES,
        autoClose: false,
      }) as AsyncIterable<Buffer>) {
        let from = 0;
        for (let at = chunk.indexOf(LF, from); at !== -1; at = chunk.indexOf(LF, from)) {
          const part = chunk.subarray(from, at);
          yield emit(carried ? Buffer.concat([...carry, part]) : Buffer.from(part));
          carry = [];
          carried = 0;
          from = at + 1;
        }
        if (from < chunk.byteLength) {
          carry.push(chunk.subarray(from));
          carried += chunk.byteLength - from;
          if (carried > MAX_RECORD_BYTES) throw tooLong(line + 1);
        }
      }
      if (carried) yield emit(Buffer.concat(carry));
    } catch (error) {
      throw error instanceof CutpointError ? error : fileError(this.path, 'append records', error);
    } finally {
      await handle.close();
    }
  }

  private async openRegular(): Promise<FileHandle> {
    let handle: FileHandle;
    try {
      // Non-blocking: opening a FIFO would otherwise wait for a writer; the file is read twice, so it must be regular.
      handle = await open(this.path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
    } catch (error) {
      throw fileError(this.path, 'append records', error);
    }
    const stat = await handle.stat();
    if (!stat.isFile()) {
      await handle.close();
      throw notRegular(this.path, 'append records', stat);
    }
    return handle;
  }
}

function tooLong(line: number): ValidationError {
  return new ValidationError(
    'stream.record_too_large',
    `line ${line}: a record may be at most ${MAX_RECORD_BYTES} bytes; nothing was appended`,
  );
}

function checkedRecord(bytes: Buffer, line: number): Uint8Array {
  if (bytes.byteLength > MAX_RECORD_BYTES) throw tooLong(line);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new ValidationError('stream.invalid_jsonl', `line ${line} is not UTF-8; nothing was appended`);
  }
  try {
    JSON.parse(text);
  } catch {
    throw new ValidationError(
      'stream.invalid_jsonl',
      `line ${line} is not one JSON value${text.trim() ? '' : ' (an empty line)'}; nothing was appended`,
    );
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
