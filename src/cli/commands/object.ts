import { parseArgs } from 'node:util';
import { faultsFromEnv, inertFaults } from '../../adapters/fault-injector.js';
import { awsPorts } from '../../adapters/ports.js';
import { provisionLocal } from '../../adapters/provision.js';
import { ValidationError } from '../../domain/errors.js';
import { putOperatorObject } from '../../objects/claimed-put.js';
import { readVerified } from '../../objects/exact-object.js';
import { assertOperatorKey } from '../../objects/reserved-keys.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { Ports } from '../../ports/index.js';
import { AwsSession, AWS_HELP, AWS_OPTIONS, refuseAwsFlagsWithoutAws, type AwsFlags } from '../aws-target.js';
import { reportFired } from '../fault-report.js';
import { localRuntimeConfig } from '../local-config.js';
import { INPUT_LIMITS, readInputBytes, UsageError } from '../io.js';

export const objectHelp = `cutpoint object put <key> [--file F | stdin] [--aws [--profile P] [--region R] [--stack S]]
  stores immutable bytes with their SHA-256 on the local runtime (--aws: in the deployed
  bucket, claimed in the deployed table, PUT with If-None-Match: *); prints {key, sha256, size,
  status}, the source reference a flow input takes. A key holds one content forever: the
  same bytes again are REUSED; other bytes are refused (objects.identity_conflict), and keys
  under the system's roots (wal/, generations/, delivery/) too (objects.reserved_key)
cutpoint object get <key> --sha256 HEX [--aws …]
  reads the object back, verified against the checksum; prints {key, sha256, size, verified}
${AWS_HELP}`;

const KEY = /^[A-Za-z0-9!_.*'()/=-]{1,900}$/;

export async function objectCommand(args: string[]): Promise<unknown> {
  const { values, positionals } = parse(args);
  const [verb, key, ...extra] = positionals;
  if ((verb !== 'put' && verb !== 'get') || !key) throw new UsageError(objectHelp);
  if (extra.length) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (verb === 'get' && !values.sha256) throw new UsageError('object get needs --sha256');
  refuseAwsFlagsWithoutAws(values);
  if (!KEY.test(key)) throw new ValidationError('objects.invalid_key', 'object key must be 1-900 characters of [A-Za-z0-9!_.*\'()/=-]');
  if (verb === 'put') assertOperatorKey(key);
  // Grammar before the runtime is touched (exit 2 wins over anything the store could say).
  if (verb === 'get' && !values.sha256) throw new UsageError('object get needs --sha256');
  const faults = values.aws ? inertFaults : faultsFromEnv(process.env);
  try {
    const ports = await portsOf(values, faults);
    if (verb === 'put') {
      const bytes = await readInputBytes(values.file, INPUT_LIMITS.object, 'object put input');
      const result = await putOperatorObject(ports, key, bytes);
      return { key, sha256: result.sha256, size: result.size, status: result.status };
    }
    const object = await readVerified(ports.objects, key, values.sha256 as string);
    return { key, sha256: values.sha256, size: object.size, verified: true };
  } finally {
    reportFired(faults);
  }
}

/**
 * The local runtime (provisioned on first use), or with --aws the deployed table and bucket
 * (flag > env > stack outputs, one region: src/cli/aws-target.ts), never provisioned: the
 * stacks own them. Faults are armed only locally, as for every command.
 */
async function portsOf(values: AwsFlags, faults: FaultInjector): Promise<Ports> {
  if (values.aws) return awsPorts(await new AwsSession(values).config(), inertFaults);
  const config = await localRuntimeConfig();
  await provisionLocal(config);
  return awsPorts(config, faults);
}

function parse(args: string[]) {
  try {
    return parseArgs({ args, allowPositionals: true, options: { file: { type: 'string' }, sha256: { type: 'string' }, ...AWS_OPTIONS } });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
