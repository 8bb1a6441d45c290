import { faultsFromEnv, inertFaults } from '../../adapters/fault-injector.js';
import { awsPorts } from '../../adapters/ports.js';
import { provisionLocal } from '../../adapters/provision.js';
import { SHA256_HEX } from '../../domain/digest.js';
import { quoted } from '../../domain/echo.js';
import { putOperatorObject } from '../../objects/claimed-put.js';
import { readVerified } from '../../objects/exact-object.js';
import { validateObjectKey } from '../../objects/object-key.js';
import { assertOperatorKey } from '../../objects/reserved-keys.js';
import type { FaultInjector } from '../../ports/faults.js';
import type { Ports } from '../../ports/index.js';
import { AwsSession, AWS_HELP, AWS_OPTIONS, refuseAwsFlagsWithoutAws, type AwsFlags } from '../aws-runtime.js';
import { reportFired } from '../fault-report.js';
import { localRuntimeConfig } from '../local-config.js';
import { INPUT_LIMITS, readInputBytes, UsageError } from '../io.js';
import { parseOptions, unexpectedArgument } from '../grammar.js';

export const objectHelp = `cutpoint object put <key> [--file F | stdin] [--aws [--profile P] [--region R] [--stack S]]
  stores immutable bytes with their SHA-256 on the local runtime (--aws: in the deployed
  bucket, claimed in the deployed table, PUT with If-None-Match: *); prints {key, sha256, size,
  status}, the source reference a flow input takes. A key holds one content forever: the
  same bytes again are REUSED; other bytes are refused (objects.identity_conflict), and keys
  under the system's roots (wal/, generations/, delivery/) too (objects.reserved_key). A key
  is 1-900 characters of [A-Za-z0-9!_.*'()/=-] whose path segments are names: an empty, "."
  or ".." segment (a/../b, a//b, /a) is objects.invalid_key, refused before anything is written
cutpoint object get <key> --sha256 HEX [--aws …]
  reads the object back, verified against the checksum; prints {key, sha256, size, verified}
${AWS_HELP}`;

export async function objectCommand(args: string[]): Promise<unknown> {
  const { values, positionals } = parse(args);
  const [verb, key, ...extra] = positionals;
  if ((verb !== 'put' && verb !== 'get') || !key) throw new UsageError(objectHelp);
  if (extra.length) throw unexpectedArgument(extra[0]);
  // Each verb's own options: the checksum is what get verifies; put computes it and prints it.
  if (verb === 'put' && values.sha256 !== undefined)
    throw new UsageError(
      '--sha256 is an option of object get; object put computes the SHA-256 of its bytes and prints it',
    );
  if (verb === 'get' && values.file !== undefined)
    throw new UsageError("--file is an option of object put; object get prints the object's key, sha256 and size");
  if (verb === 'get' && !values.sha256) throw new UsageError('object get needs --sha256');
  if (verb === 'get' && !SHA256_HEX.test(values.sha256 as string))
    throw new UsageError(`--sha256 must be 64 lower-case hex digits, got ${quoted(values.sha256 as string)}`);
  refuseAwsFlagsWithoutAws(values);
  if (verb === 'put') assertOperatorKey(key);
  else validateObjectKey(key);
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
 * (flag > env > stack outputs, one region: src/cli/aws-runtime.ts), never provisioned: the
 * stacks own them. Faults are armed only locally, as for every command.
 */
async function portsOf(values: AwsFlags, faults: FaultInjector): Promise<Ports> {
  if (values.aws) return awsPorts(await new AwsSession(values).config(), inertFaults);
  const config = await localRuntimeConfig();
  await provisionLocal(config);
  return awsPorts(config, faults);
}

function parse(args: string[]) {
  return parseOptions(args, { file: { type: 'string' }, sha256: { type: 'string' }, ...AWS_OPTIONS });
}
