import { ConfigError } from './errors.js';

/**
 * The one reader of a whole number from the environment: decimal digits only — no sign,
 * fraction, exponent, `0x` prefix, `Infinity` or surrounding spaces — in [min, max]. Unset
 * or empty is undefined (the caller's default); anything else is a ConfigError naming the
 * variable (`code`, default `config.invalid_integer`), never ignored or read as something
 * else (`0x10` is not 16).
 */
export function integerFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  range: { min: number; max: number; unit?: string },
  code = 'config.invalid_integer',
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = /^\d{1,15}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= range.min && value <= range.max)) {
    throw new ConfigError(
      code,
      `${name} must be a whole number${range.unit ? ` of ${range.unit}` : ''} from ${range.min} to ${range.max}, written in decimal digits only`,
    );
  }
  return value;
}
