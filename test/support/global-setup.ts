import type { TestProject } from 'vitest/node';
import { startLocalRuntime, type LocalRuntime } from '../../src/local/runtime.js';

/**
 * One DynamoDB Local and one S3 emulator for the whole run, on free loopback ports,
 * started by the tests themselves and stopped at the end. Each test file provisions its
 * own table and bucket, so files never see each other's data.
 *
 * Both integration projects (vitest.config.ts) name this setup; vitest runs it once per
 * project, in its own process, so the runtime is kept on `globalThis` (a module of a
 * project's own graph is not shared) and stopped when the last project tears down.
 */
interface Shared {
  runtime: Promise<LocalRuntime>;
  users: number;
}

const KEY = Symbol.for('cutpoint.test.localRuntime');
const holder = globalThis as { [KEY]?: Shared };

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const shared = (holder[KEY] ??= { runtime: startLocalRuntime(), users: 0 });
  shared.users++;
  const runtime = await shared.runtime;
  project.provide('dynamodbEndpoint', runtime.dynamodbEndpoint);
  project.provide('s3Endpoint', runtime.s3Endpoint);
  return async () => {
    if (--shared.users > 0) return;
    delete holder[KEY];
    await runtime.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    dynamodbEndpoint: string;
    s3Endpoint: string;
  }
}
