import { parseArgs } from 'node:util';
import { faultsFromEnv } from '../../adapters/fault-injector.js';
import { awsPorts } from '../../adapters/ports.js';
import { provisionLocal } from '../../adapters/provision.js';
import { sha256Hex } from '../../domain/digest.js';
import { ValidationError } from '../../domain/errors.js';
import { putExact, readVerified } from '../../objects/exact-object.js';
import { localRuntimeConfig } from '../local-config.js';
import { INPUT_LIMITS, readInputBytes, UsageError } from '../io.js';

export const objectHelp = `cutpoint object put <key> [--file F | stdin]
  stores immutable bytes with their SHA-256 on the local runtime; prints {key, sha256, size},
  the source reference a flow input takes
cutpoint object get <key> --sha256 HEX
  reads the object back, verified against the checksum; prints {key, sha256, size, verified}`;

const KEY = /^[A-Za-z0-9!_.*'()/=-]{1,900}$/;

export async function objectCommand(args: string[]): Promise<unknown> {
  const { values, positionals } = parse(args);
  const [verb, key] = positionals;
  if ((verb !== 'put' && verb !== 'get') || !key) throw new UsageError(objectHelp);
  if (!KEY.test(key)) throw new ValidationError('objects.invalid_key', 'object key must be 1-900 characters of [A-Za-z0-9!_.*\'()/=-]');
  const config = await localRuntimeConfig();
  await provisionLocal(config);
  const ports = awsPorts(config, faultsFromEnv(process.env));
  if (verb === 'put') {
    const bytes = await readInputBytes(values.file, INPUT_LIMITS.object, 'object put input');
    const sha256 = sha256Hex(bytes);
    const result = await putExact(ports.objects, 'cli.object.put', key, bytes, { sha256 });
    return { key, sha256, size: bytes.byteLength, status: result.status };
  }
  if (!values.sha256) throw new UsageError('object get needs --sha256');
  const object = await readVerified(ports.objects, key, values.sha256);
  return { key, sha256: values.sha256, size: object.size, verified: true };
}

function parse(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, options: { file: { type: 'string' }, sha256: { type: 'string' } } });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
