import { quoted } from '../domain/echo.js';
import { ValidationError } from '../domain/errors.js';

const KEY = /^[A-Za-z0-9!_.*'()/=-]{1,900}$/;

/**
 * An object key an operator names (`cutpoint object put|get <key>`): 1-900 characters of
 * [A-Za-z0-9!_.*'()/=-], whose path segments are names — never empty (a leading, trailing
 * or doubled `/`), never `.` or `..`. A store may resolve `x/../docs/readme.txt` to another
 * key than the one claimed (the S3 emulator does): such a put could never settle, and its
 * claim would refuse every later put of the key. Refused (`objects.invalid_key`) before
 * anything is read or written.
 */
export function validateObjectKey(key: string): string {
  if (!KEY.test(key))
    throw new ValidationError('objects.invalid_key', "object key must be 1-900 characters of [A-Za-z0-9!_.*'()/=-]");
  const segment = key.split('/').find((s) => s === '' || s === '.' || s === '..');
  if (segment !== undefined) {
    const what =
      segment === ''
        ? 'an empty path segment (a leading, trailing or doubled /)'
        : `a ${JSON.stringify(segment)} path segment`;
    throw new ValidationError(
      'objects.invalid_key',
      `object key ${quoted(key)} has ${what}; every segment between slashes must be a name`,
    );
  }
  return key;
}
