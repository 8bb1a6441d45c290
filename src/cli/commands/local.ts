import { parsePort, PORT_SETTINGS, runtimePorts, type RuntimePorts } from '../../local/ports.js';
import { assertLocalEngines } from '../../adapters/local-engines.js';
import { localDown, localStatus, localUp } from '../../local/runtime.js';
import { quoted } from '../../domain/echo.js';
import { progress, UsageError } from '../io.js';
import { parseOptions, unexpectedArgument, unknownSubcommand } from '../grammar.js';

export const localHelp = `cutpoint local up [--dynamodb-port N] [--s3-port N]
  start DynamoDB Local and the S3 emulator in the background (data under .cutpoint/local);
  ports default to CUTPOINT_DYNAMODB_PORT / CUTPOINT_S3_PORT, else 8000 and 4566 (a
  second clone picks two other ports); a port in use is local.port_in_use
cutpoint local down
  stop them
cutpoint local status
  show whether they run and where`;

const UP_OPTIONS = { 'dynamodb-port': { type: 'string' }, 's3-port': { type: 'string' } } as const;

export async function localCommand(args: string[]): Promise<unknown> {
  const [verb, ...rest] = args;
  switch (verb) {
    case 'up': {
      const ports = runtimePorts(portFlags(parse(rest, UP_OPTIONS)), process.env);
      assertLocalEngines(); // an install without the local runtime says so before it says "starting"
      progress(
        `starting the local runtime (DynamoDB Local on ${ports.dynamodbPort}, S3 emulator on ${ports.s3Port}) …`,
      );
      return localUp(undefined, ports);
    }
    case 'down':
      parse(rest, {});
      return localDown();
    case 'status':
      parse(rest, {});
      return localStatus();
    default:
      throw unknownSubcommand('local', verb, localHelp);
  }
}

function portFlags(values: Record<string, string | boolean | undefined>): Partial<RuntimePorts> {
  const flags: Partial<RuntimePorts> = {};
  for (const key of ['dynamodbPort', 's3Port'] as const) {
    const setting = PORT_SETTINGS[key];
    const raw = values[setting.flag.slice(2)];
    if (raw === undefined) continue;
    const port = typeof raw === 'string' ? parsePort(raw) : undefined;
    if (port === undefined)
      throw new UsageError(`${setting.flag} must be a port number 1-65535, got ${quoted(String(raw))}`);
    flags[key] = port;
  }
  return flags;
}

function parse(args: string[], options: Record<string, { type: 'string' | 'boolean' }>) {
  const { values, positionals } = parseOptions(args, options);
  if (positionals.length) throw unexpectedArgument(positionals[0]);
  return values;
}
