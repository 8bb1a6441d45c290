import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';
import { FaultSwitch } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { provisionLocal } from '../../src/adapters/provision.js';
import type { CutpointConfig } from '../../src/config.js';
import type { Ports } from '../../src/ports/index.js';
import { RequestMeter } from '../../src/adapters/request-meter.js';
import { HoldingFaults, type HeldEffect } from './held-effect.js';

export interface TestStores {
  config: CutpointConfig;
  ports: Ports;
  faults: FaultSwitch;
  meter: RequestMeter;
  /** Holds the next effect at a cut point until released (test/support/held-effect.ts); the armed faults apply after. */
  hold(cutPoint: string): HeldEffect;
}

/**
 * A fresh table and bucket on the run's emulators (see global-setup.ts), with ports wired
 * through a re-armable fault injector. Real DynamoDB Local and a real S3 emulator: no
 * hand-written fakes.
 */
export async function freshStores(): Promise<TestStores> {
  const id = randomUUID().slice(0, 8);
  const config: CutpointConfig = {
    tableName: `cutpoint-test-${id}`,
    bucketName: `cutpoint-test-${id}`,
    region: 'us-east-1',
    endpoints: { dynamodb: inject('dynamodbEndpoint'), s3: inject('s3Endpoint') },
  };
  await provisionLocal(config);
  const faults = new FaultSwitch();
  const holding = new HoldingFaults(faults);
  const meter = new RequestMeter();
  return { config, ports: awsPorts(config, holding, meter), faults, meter, hold: (cutPoint) => holding.hold(cutPoint) };
}
