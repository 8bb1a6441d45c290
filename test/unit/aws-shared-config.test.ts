import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { profileRegion, type SharedConfigPaths } from '../../src/adapters/aws-shared-config.js';

/**
 * A profile's region read by the SDK's own config loader (src/adapters/aws-shared-config.ts):
 * the rules are the SDK's, so the region the CLI resolves is the one a client of that
 * profile would pick itself.
 */
let dir: string;
let paths: SharedConfigPaths;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cutpoint-shared-config-'));
  paths = { config: join(dir, 'config'), credentials: join(dir, 'credentials') };
  await writeFile(
    paths.config,
    [
      '# shared config',
      '[default]',
      'region = us-east-2',
      '',
      '[profile ops]',
      'output = json',
      'region=eu-central-1 ; note',
      's3 =',
      '  region = nope',
      '[profile both]',
      'region = eu-north-1',
      '[profile  spaced ]',
      'region = sa-east-1',
    ].join('\n'),
  );
  await writeFile(
    paths.credentials,
    ['[ci]', 'aws_access_key_id = AKIDEXAMPLE', 'region = ca-central-1', '[both]', 'region = ca-west-1'].join('\r\n'),
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("a profile's region, as the SDK reads it", () => {
  it('[default] and [profile NAME] in config (comments and nested settings aside), then [NAME] in credentials', async () => {
    expect(await profileRegion('default', paths)).toBe('us-east-2');
    expect(await profileRegion('ops', paths)).toBe('eu-central-1');
    expect(await profileRegion('ci', paths)).toBe('ca-central-1');
    expect(await profileRegion('absent', paths)).toBeUndefined();
  });

  it("the credentials file's region wins when both files set one, as the SDK's clients resolve it", async () => {
    expect(await profileRegion('both', paths)).toBe('ca-west-1');
  });

  it('a section name the SDK cannot parse (spaces in the profile name) names no profile', async () => {
    expect(await profileRegion('spaced', paths)).toBeUndefined();
    expect(await profileRegion(' spaced ', paths)).toBeUndefined();
  });

  it('absent files give undefined; a file changed since the last read is read again', async () => {
    expect(await profileRegion('default', { config: join(dir, 'no-config'), credentials: join(dir, 'none') })).toBe(
      undefined,
    );
    const changing = join(dir, 'changing');
    await writeFile(changing, '[default]\nregion = us-west-1\n');
    expect(await profileRegion('default', { config: changing, credentials: join(dir, 'none') })).toBe('us-west-1');
    await writeFile(changing, '[default]\nregion = us-west-2\n');
    expect(await profileRegion('default', { config: changing, credentials: join(dir, 'none') })).toBe('us-west-2');
  });
});
