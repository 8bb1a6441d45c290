import type { CutpointConfig } from '../config.js';
import { systemClock } from '../engine/system-clock.js';
import type { FaultInjector } from '../ports/faults.js';
import type { Ports } from '../ports/index.js';
import type { RequestMeter } from './request-meter.js';
import { awsClients, instrumentedClients, type AwsClientOptions } from './aws-clients.js';
import { DynamoAuthorityStore } from './dynamodb/authority-store.js';
import { S3ObjectStore } from './s3/object-store.js';

/** Wires the use cases' ports to DynamoDB and S3 (real or emulated). */
export function awsPorts(
  config: CutpointConfig,
  faults: FaultInjector,
  meter?: RequestMeter,
  clientOptions?: AwsClientOptions,
): Ports {
  const clients = instrumentedClients(awsClients(config), clientOptions);
  return {
    authority: new DynamoAuthorityStore({
      tableName: config.tableName,
      writer: clients.dynamoWriter,
      reader: clients.dynamoReader,
      faults,
      meter,
    }),
    objects: new S3ObjectStore({ bucket: config.bucketName, client: clients.s3, faults, meter }),
    clock: systemClock,
  };
}
