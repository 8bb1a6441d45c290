import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsSession } from '../../src/cli/aws-runtime.js';
import { JsonlFile } from '../../src/cli/commands/stream/jsonl-file.js';
import { readRegularFileSync } from '../../src/cli/input.js';

/**
 * Inputs whose size is not what they say: the AWS shared config files `--aws` reads (a FIFO
 * would hang the command, /dev/zero exhaust its memory) and a JSON Lines file far larger
 * than one command may append. Each is refused with a stable code before — or while —
 * reading, after reading no more than the bound.
 */

let root = '';
let fifo = '';
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'cutpoint-bounds-'));
  fifo = join(root, 'config.fifo');
  execFileSync('mkfifo', [fifo]);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe('the AWS shared config and credentials files', () => {
  it('a FIFO, a device or a directory is cli.file_not_regular, a file past the limit cli.input_too_large, an absent one nothing', async () => {
    expect(() => readRegularFileSync(fifo, 1024, 'AWS_CONFIG_FILE')).toThrow(
      expect.objectContaining({ code: 'cli.file_not_regular', message: expect.stringContaining('a FIFO') }),
    );
    expect(() => readRegularFileSync('/dev/zero', 1024, 'AWS_CONFIG_FILE')).toThrow(
      expect.objectContaining({ code: 'cli.file_not_regular', message: expect.stringContaining('a device') }),
    );
    expect(() => readRegularFileSync(root, 1024, 'AWS_CONFIG_FILE')).toThrow(
      expect.objectContaining({ code: 'cli.file_not_regular' }),
    );
    const big = join(root, 'big-config');
    await writeFile(big, 'x'.repeat(2048));
    expect(() => readRegularFileSync(big, 1024, 'AWS_CONFIG_FILE')).toThrow(
      expect.objectContaining({ code: 'cli.input_too_large' }),
    );
    // A regular file whose size says 0 and that never ends: the bytes read are capped.
    expect(() => readRegularFileSync('/proc/self/pagemap', 1024, 'AWS_CONFIG_FILE')).toThrow(
      expect.objectContaining({ code: 'cli.input_too_large' }),
    );
    expect(readRegularFileSync(join(root, 'absent'), 1024, 'AWS_CONFIG_FILE')).toBeUndefined();
    expect(new TextDecoder().decode(readRegularFileSync(big, 4096, 'AWS_CONFIG_FILE'))).toBe('x'.repeat(2048));
  });

  it('--aws checks both files before any client exists, whatever the region comes from (the SDK reads them too)', async () => {
    const env = (config: string, credentials = join(root, 'absent')) => ({
      AWS_CONFIG_FILE: config,
      AWS_SHARED_CREDENTIALS_FILE: credentials,
      AWS_REGION: 'eu-west-1',
    });
    await expect(new AwsSession({ aws: true, region: 'eu-west-1' }, env(fifo)).connection()).rejects.toMatchObject({
      code: 'cli.file_not_regular',
      message: expect.stringContaining('AWS_CONFIG_FILE'),
    });
    await expect(
      new AwsSession({ aws: true }, env(join(root, 'absent'), '/dev/zero')).connection(),
    ).rejects.toMatchObject({
      code: 'cli.file_not_regular',
      message: expect.stringContaining('AWS_SHARED_CREDENTIALS_FILE'),
    });
    expect(await new AwsSession({ aws: true }, env(join(root, 'absent'))).connection()).toEqual({
      region: 'eu-west-1',
      operator: true,
    });
  });
});

describe('stream append --from: a file one command cannot append', () => {
  it('is stream.file_too_large as soon as it needs more than 1,000 groups at the knobs given, read no further (30 MB at 5 records a group)', async () => {
    const file = join(root, 'big.jsonl');
    const line = `${JSON.stringify({ pad: 'p'.repeat(290) })}\n`;
    await writeFile(file, line.repeat(Math.ceil((30 * 1024 * 1024) / line.length)));
    const t0 = performance.now();
    await expect(new JsonlFile(file).scan({ groups: 1000, records: 5, bytes: 1024 * 1024 })).rejects.toMatchObject({
      code: 'stream.file_too_large',
      message: expect.stringContaining('read up to line 5001'),
    });
    expect(performance.now() - t0).toBeLessThan(10_000);
    // Within the bound it is scanned whole.
    await expect(
      new JsonlFile(file).scan({ groups: 1000, records: 1_000_000, bytes: 6 * 1024 * 1024 }),
    ).resolves.toMatchObject({ records: Math.ceil((30 * 1024 * 1024) / line.length) });
  }, 60_000);
});
