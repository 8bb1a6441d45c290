import { Duration } from 'aws-cdk-lib';
import { validateLane, type LaneRef } from '../src/domain/stream.js';

/** Which lanes the schedule maintains and how often (CDK context cutpoint:maintenanceLanes / cutpoint:maintenanceRateMinutes). */
export interface MaintenanceConfig {
  lanes: LaneRef[];
  rate: Duration;
}

/** EventBridge caps a target's constant input at 8192 characters. */
const MAX_INPUT = 8192;
/** stream-maintain's bound (its CheckLanes state): two worst-case waves of 4 lanes fit its 24 h timeout. */
export const MAX_MAINTENANCE_LANES = 8;
export const DEFAULT_MAINTENANCE_RATE_MINUTES = 60;

/**
 * A stage's `maintenanceLanes` ["logs:0", "logs:1"] and `maintenanceRateMinutes` (cutpoint.config.json):
 * the lanes (stream:partition) the schedule maintains; unset, there is no schedule. Fails
 * the synth on a malformed lane, a bad rate or a list too long for one rule's input.
 */
export function maintenanceConfigOf(lanesValue: unknown, rateValue: unknown): MaintenanceConfig | undefined {
  if (lanesValue === undefined || lanesValue === '') {
    if (rateValue !== undefined)
      throw new Error(
        'cutpoint:maintenanceRateMinutes needs cutpoint:maintenanceLanes (stream:partition, comma-separated)',
      );
    return undefined;
  }
  const items = Array.isArray(lanesValue) ? lanesValue.map(String) : String(lanesValue).split(',');
  const lanes = items.map((item) => {
    const match = /^(.+):(\d+)$/.exec(item.trim());
    if (!match) throw new Error(`cutpoint:maintenanceLanes: ${JSON.stringify(item)} is not stream:partition`);
    return validateLane({ stream: match[1], partition: Number(match[2]) });
  });
  const keys = lanes.map((l) => `${l.stream}:${l.partition}`);
  if (new Set(keys).size !== keys.length) throw new Error('cutpoint:maintenanceLanes lists a lane twice');
  if (lanes.length > MAX_MAINTENANCE_LANES)
    throw new Error(
      `cutpoint:maintenanceLanes lists ${lanes.length} lanes; one schedule maintains at most ${MAX_MAINTENANCE_LANES}`,
    );
  if (JSON.stringify({ lanes }).length > MAX_INPUT)
    throw new Error(`cutpoint:maintenanceLanes is too long for one schedule's input (${MAX_INPUT} characters)`);
  const minutes = rateValue === undefined ? DEFAULT_MAINTENANCE_RATE_MINUTES : Number(rateValue);
  if (!Number.isInteger(minutes) || minutes < 1 || minutes > 7 * 24 * 60)
    throw new Error('cutpoint:maintenanceRateMinutes must be a whole number of minutes from 1 to 10080');
  return { lanes, rate: Duration.minutes(minutes) };
}
