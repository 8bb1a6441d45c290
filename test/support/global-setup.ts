import type { TestProject } from 'vitest/node';
import { startLocalRuntime } from '../../src/local/runtime.js';

/**
 * One DynamoDB Local and one S3 emulator for the whole run, on free loopback ports,
 * started by the tests themselves and stopped at the end. Each test file provisions its
 * own table and bucket, so files never see each other's data.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runtime = await startLocalRuntime();
  project.provide('dynamodbEndpoint', runtime.dynamodbEndpoint);
  project.provide('s3Endpoint', runtime.s3Endpoint);
  return () => runtime.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    s3Endpoint: string;
  }
}
