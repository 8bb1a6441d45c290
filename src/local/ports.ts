import { ConfigError } from '../domain/errors.js';

/**
 * The persistent local runtime's ports (`cutpoint local up`): from the flags
 * `--dynamodb-port`/`--s3-port`, else CUTPOINT_DYNAMODB_PORT/CUTPOINT_S3_PORT, else 8000
 * and 4566. Each clone's runtime keeps its own state directory, so a second clone only
 * needs two other ports. An invalid value is refused before anything starts.
 */
export const DEFAULT_DYNAMODB_PORT = 8000;
export const DEFAULT_S3_PORT = 4566;

export interface RuntimePorts {
  dynamodbPort: number;
  s3Port: number;
}

export const PORT_SETTINGS = {
  dynamodbPort: {
    flag: '--dynamodb-port',
    env: 'CUTPOINT_DYNAMODB_PORT',
    service: 'DynamoDB Local',
    fallback: DEFAULT_DYNAMODB_PORT,
  },
  s3Port: { flag: '--s3-port', env: 'CUTPOINT_S3_PORT', service: 'the S3 emulator', fallback: DEFAULT_S3_PORT },
} as const;

/** A port number as given (flag or variable): a decimal integer 1-65535, or undefined. */
export function parsePort(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d{1,5}$/.test(raw)) return undefined;
  const port = Number(raw);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/**
 * Resolves both ports. `flags` were checked by the caller's grammar (exit 2); a malformed
 * environment variable is `local.invalid_port` (exit 1); the same port for both services
 * is `local.port_conflict`.
 */
export function runtimePorts(flags: Partial<RuntimePorts>, env: NodeJS.ProcessEnv): RuntimePorts {
  const resolve = (key: keyof RuntimePorts): number => {
    const setting = PORT_SETTINGS[key];
    const flag = flags[key];
    if (flag !== undefined) return flag;
    const raw = env[setting.env];
    if (raw === undefined || raw === '') return setting.fallback;
    const port = parsePort(raw);
    if (port === undefined)
      throw new ConfigError(
        'local.invalid_port',
        `${setting.env} must be a port number 1-65535, got ${JSON.stringify(raw)}`,
      );
    return port;
  };
  const ports = { dynamodbPort: resolve('dynamodbPort'), s3Port: resolve('s3Port') };
  if (ports.dynamodbPort === ports.s3Port) {
    throw new ConfigError(
      'local.port_conflict',
      `DynamoDB Local and the S3 emulator cannot share port ${ports.s3Port}; give them different ports (--dynamodb-port, --s3-port)`,
    );
  }
  return ports;
}
