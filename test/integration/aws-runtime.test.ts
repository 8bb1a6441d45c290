import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { awsClients, cloudFormationClient, secretsManagerClient, sfnClient } from '../../src/adapters/aws-clients.js';
import { describeStack } from '../../src/adapters/cloudformation/stack-outputs.js';
import { inertFaults } from '../../src/adapters/fault-injector.js';
import { awsPorts } from '../../src/adapters/ports.js';
import { provisionLocal } from '../../src/adapters/provision.js';
import { AwsSession } from '../../src/cli/aws-runtime.js';
import { sha256Hex } from '../../src/domain/digest.js';
import { fakeCloudFormation, recordingProxy, type Loopback } from '../support/aws-loopback.js';
import { runCutpointInProcess } from '../support/cli-runtime.js';

/**
 * `--aws`: one region for every client of a command (flag > AWS_REGION >
 * AWS_DEFAULT_REGION > the profile's region), the table, bucket and state machines from the
 * deployed stacks' outputs (flag > env > outputs), and `object put --aws` writing to the
 * deployed bucket. CloudFormation is a loopback DescribeStacks responder (there is no
 * emulator); DynamoDB and S3 are the real emulators behind a recording pass-through, so
 * the test sees the region every request was signed for.
 */
let dir: string;
let configFile: string;
const id = randomUUID().slice(0, 8);
const TABLE = `cutpoint-aws-${id}`;
const BUCKET = `cutpoint-aws-${id}`;
let cfn: Loopback;
let dynamo: Loopback;
let s3: Loopback;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cutpoint-aws-runtime-'));
  configFile = join(dir, 'config');
  // Test-only keys of a throw-away profile: signed requests only ever reach loopback.
  await writeFile(
    configFile,
    [
      '[default]',
      'region = us-east-2',
      '[profile ops]',
      'region = eu-west-3',
      'aws_access_key_id = AKIDLOOPBACKTEST',
      'aws_secret_access_key = loopback-test-only',
    ].join('\n'),
  );
  cfn = await fakeCloudFormation({
    CutpointStateful: {
      TableName: TABLE,
      BucketName: BUCKET,
      TableArn: 'arn:aws:dynamodb:eu-west-3:123456789012:table/x',
    },
    CutpointWorkflows: { DeliverWindowStateMachineArn: 'arn:aws:states:eu-west-3:123456789012:stateMachine:dw' },
    OnlyWorkflows: { DeliverWindowStateMachineArn: 'arn:aws:states:eu-west-3:123456789012:stateMachine:dw' },
  });
  dynamo = await recordingProxy(inject('dynamodbEndpoint'));
  s3 = await recordingProxy(inject('s3Endpoint'));
  await provisionLocal({
    tableName: TABLE,
    bucketName: BUCKET,
    region: 'eu-west-3',
    endpoints: { dynamodb: inject('dynamodbEndpoint'), s3: inject('s3Endpoint') },
  });
});

afterAll(async () => {
  await Promise.all([cfn?.close(), dynamo?.close(), s3?.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** The environment of an operator with a profile and no AWS_REGION: the case that split one command over two regions. */
const profileEnv = (extra: Record<string, string | undefined> = {}): Record<string, string | undefined> => ({
  AWS_CONFIG_FILE: configFile,
  AWS_SHARED_CREDENTIALS_FILE: join(dir, 'no-credentials'),
  AWS_REGION: undefined,
  AWS_DEFAULT_REGION: undefined,
  AWS_PROFILE: undefined,
  AWS_ACCESS_KEY_ID: undefined,
  AWS_SECRET_ACCESS_KEY: undefined,
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_ENDPOINT_URL_CLOUDFORMATION: cfn.endpoint,
  CUTPOINT_TABLE_NAME: undefined,
  CUTPOINT_BUCKET_NAME: undefined,
  CUTPOINT_DELIVER_WINDOW_ARN: undefined,
  ...extra,
});

/** Every SDK client a command can build, from one session. */
async function regionsOf(session: AwsSession): Promise<Record<string, string>> {
  const config = await session.config();
  const connection = await session.connection();
  const data = awsClients(config);
  const clients = {
    dynamoWriter: data.dynamoWriter,
    dynamoReader: data.dynamoReader,
    s3: data.s3,
    sfn: sfnClient(connection),
    cloudFormation: cloudFormationClient(connection),
    secretsManager: secretsManagerClient(connection),
  };
  const regions: Record<string, string> = {};
  for (const [name, client] of Object.entries(clients)) {
    regions[name] = await client.config.region();
    client.destroy();
  }
  return regions;
}

describe('--aws: one region for every client of a command', () => {
  it("the profile's region alone (no AWS_REGION): DynamoDB, S3, Step Functions, CloudFormation and Secrets Manager all get it", async () => {
    const env = {
      ...process.env,
      ...profileEnv({ CUTPOINT_TABLE_NAME: TABLE, CUTPOINT_BUCKET_NAME: BUCKET }),
    } as NodeJS.ProcessEnv;
    for (const k of Object.keys(env)) if (env[k] === undefined) delete env[k];
    const regions = await regionsOf(new AwsSession({ aws: true, profile: 'ops' }, env));
    expect(regions).toEqual({
      dynamoWriter: 'eu-west-3',
      dynamoReader: 'eu-west-3',
      s3: 'eu-west-3',
      sfn: 'eu-west-3',
      cloudFormation: 'eu-west-3',
      secretsManager: 'eu-west-3',
    });
    // The default profile's region when no profile is named; AWS_DEFAULT_REGION beats it, AWS_REGION beats both, --region beats all.
    expect(new Set(Object.values(await regionsOf(new AwsSession({ aws: true }, env))))).toEqual(new Set(['us-east-2']));
    expect(
      new Set(
        Object.values(
          await regionsOf(
            new AwsSession({ aws: true, profile: 'ops' }, { ...env, AWS_DEFAULT_REGION: 'ca-central-1' }),
          ),
        ),
      ),
    ).toEqual(new Set(['ca-central-1']));
    expect(
      new Set(
        Object.values(
          await regionsOf(
            new AwsSession(
              { aws: true, profile: 'ops' },
              { ...env, AWS_REGION: 'ap-south-1', AWS_DEFAULT_REGION: 'ca-central-1' },
            ),
          ),
        ),
      ),
    ).toEqual(new Set(['ap-south-1']));
    expect(
      new Set(
        Object.values(
          await regionsOf(
            new AwsSession({ aws: true, profile: 'ops', region: 'sa-east-1' }, { ...env, AWS_REGION: 'ap-south-1' }),
          ),
        ),
      ),
    ).toEqual(new Set(['sa-east-1']));
  });

  it('no region anywhere is aws.region_missing, exit 1, nothing looked up', async () => {
    const r = await runCutpointInProcess(['object', 'put', 'ops/x.txt', '--aws', '--profile', 'nobody'], {
      env: profileEnv(),
      stdin: 'x',
    });
    expect(r).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'aws.region_missing: no region: pass --region, set AWS_REGION, or set region in profile nobody of the shared config file\n',
    });
  });
});

describe('--aws: state machines by flag > env > stack output', () => {
  it('the output <Flow>StateMachineArn when neither is given; a flag or CUTPOINT_<FLOW>_ARN wins without any DescribeStacks', async () => {
    // The SDK reads its credentials and endpoint from process.env: set for this test only.
    const vars = profileEnv({
      AWS_ACCESS_KEY_ID: 'AKIDLOOPBACKTEST',
      AWS_SECRET_ACCESS_KEY: 'loopback-test-only',
      AWS_REGION: 'eu-west-3',
    });
    const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
    const apply = (v: Record<string, string | undefined>) => {
      for (const [k, value] of Object.entries(v))
        if (value === undefined) delete process.env[k];
        else process.env[k] = value;
    };
    apply(vars);
    try {
      const before = cfn.scopes.length;
      const overridden = new AwsSession(
        { aws: true },
        { ...process.env, CUTPOINT_DELIVER_WINDOW_ARN: 'arn:aws:states:eu-west-3:123456789012:stateMachine:from-env' },
      );
      expect(
        await overridden.stateMachineArn(
          'deliver-window',
          'arn:aws:states:eu-west-3:123456789012:stateMachine:from-flag',
        ),
      ).toBe('arn:aws:states:eu-west-3:123456789012:stateMachine:from-flag');
      expect(await overridden.stateMachineArn('deliver-window')).toBe(
        'arn:aws:states:eu-west-3:123456789012:stateMachine:from-env',
      );
      expect(cfn.scopes.length).toBe(before);
      const looked = new AwsSession({ aws: true });
      expect(await looked.stateMachineArn('deliver-window')).toBe(
        'arn:aws:states:eu-west-3:123456789012:stateMachine:dw',
      );
      expect(await looked.stateMachineArn('deliver-window')).toBe(
        'arn:aws:states:eu-west-3:123456789012:stateMachine:dw',
      );
      // One DescribeStacks per stack for the whole command, however many names it needs.
      expect(cfn.scopes.slice(before)).toEqual(['cloudformation/eu-west-3', 'cloudformation/eu-west-3']);
      await expect(looked.stateMachineArn('stream-append')).rejects.toMatchObject({
        code: 'aws.output_missing',
        message:
          'no stack output StreamAppendStateMachineArn in CutpointStateful, CutpointWorkflows (redeploy the stacks, or set --state-machine-arn or CUTPOINT_STREAM_APPEND_ARN)',
      });
    } finally {
      apply(saved);
    }
  });
});

describe('cutpoint object put --aws', () => {
  it('writes to the bucket the stack names, claimed in its table, every request signed for the one region', async () => {
    const env = profileEnv({ CUTPOINT_DYNAMODB_ENDPOINT: dynamo.endpoint, CUTPOINT_S3_ENDPOINT: s3.endpoint });
    const before = { cfn: cfn.scopes.length, dynamo: dynamo.scopes.length, s3: s3.scopes.length };
    const r = await runCutpointInProcess(['object', 'put', 'ops/hello.txt', '--aws', '--profile', 'ops'], {
      env,
      stdin: 'hello deployed bucket\n',
    });
    const sha256 = sha256Hex(new TextEncoder().encode('hello deployed bucket\n'));
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(JSON.parse(r.stdout)).toEqual({ key: 'ops/hello.txt', sha256, size: 22, status: 'WRITTEN' });
    const sent = {
      cfn: cfn.scopes.slice(before.cfn),
      dynamo: dynamo.scopes.slice(before.dynamo),
      s3: s3.scopes.slice(before.s3),
    };
    expect(sent.cfn).toEqual(['cloudformation/eu-west-3', 'cloudformation/eu-west-3']);
    expect(sent.dynamo.length).toBeGreaterThan(0);
    expect(sent.s3.length).toBeGreaterThan(0);
    expect(new Set([...sent.dynamo, ...sent.s3].map((s) => s.split('/')[1]))).toEqual(new Set(['eu-west-3']));

    // The bytes are in the stack's bucket, under the key, with the claim in the stack's table.
    const ports = awsPorts(
      {
        tableName: TABLE,
        bucketName: BUCKET,
        region: 'eu-west-3',
        endpoints: { dynamodb: inject('dynamodbEndpoint'), s3: inject('s3Endpoint') },
      },
      inertFaults,
    );
    expect((await ports.objects.head('ops/hello.txt'))?.size).toBe(22);
    expect(await ports.authority.get({ pk: 'object#ops/hello.txt', sk: 'claim' })).toMatchObject({ sha256 });

    // The immutability guard holds on AWS as locally: the same bytes REUSED, others refused, nothing written.
    const again = await runCutpointInProcess(['object', 'put', 'ops/hello.txt', '--aws', '--profile', 'ops'], {
      env,
      stdin: 'hello deployed bucket\n',
    });
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'REUSED' });
    const other = await runCutpointInProcess(['object', 'put', 'ops/hello.txt', '--aws', '--profile', 'ops'], {
      env,
      stdin: 'other bytes\n',
    });
    expect({ code: other.code, stdout: other.stdout }).toEqual({ code: 1, stdout: '' });
    expect(other.stderr).toMatch(/^objects\.identity_conflict: /);
    const got = await runCutpointInProcess(
      ['object', 'get', 'ops/hello.txt', '--sha256', sha256, '--aws', '--profile', 'ops'],
      { env },
    );
    expect(JSON.parse(got.stdout)).toEqual({ key: 'ops/hello.txt', sha256, size: 22, verified: true });
  });

  it('the environment overrides the stack outputs (no DescribeStacks then); --profile/--region/--stack without --aws is a usage error', async () => {
    const env = profileEnv({
      CUTPOINT_DYNAMODB_ENDPOINT: dynamo.endpoint,
      CUTPOINT_S3_ENDPOINT: s3.endpoint,
      CUTPOINT_TABLE_NAME: TABLE,
      CUTPOINT_BUCKET_NAME: BUCKET,
      AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://127.0.0.1:9',
    });
    const r = await runCutpointInProcess(['object', 'put', 'ops/env.txt', '--aws', '--region', 'eu-west-3'], {
      env: { ...env, AWS_ACCESS_KEY_ID: 'AKIDLOOPBACKTEST', AWS_SECRET_ACCESS_KEY: 'loopback-test-only' },
      stdin: 'env\n',
    });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    const usage = await runCutpointInProcess(['object', 'put', 'ops/env.txt', '--profile', 'ops'], {
      env,
      stdin: 'env\n',
    });
    expect({ code: usage.code, stdout: usage.stdout, stderr: usage.stderr.split('\n')[0] }).toEqual({
      code: 2,
      stdout: '',
      stderr: 'cli.usage: --profile needs --aws',
    });
  });

  it('a stack that does not exist is aws.stack_not_found; a stack without the output is aws.output_missing naming it; exit 1, empty stdout', async () => {
    const env = profileEnv();
    const missing = await runCutpointInProcess(
      ['object', 'put', 'ops/y.txt', '--aws', '--profile', 'ops', '--stack', 'NoSuchStack'],
      { env, stdin: 'y' },
    );
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'aws.stack_not_found: stack NoSuchStack does not exist in eu-west-3 (deploy it with `npx cdk deploy --all`, or name yours with --stack, or pass --region/--profile)\n',
    });
    const noOutput = await runCutpointInProcess(
      ['object', 'put', 'ops/y.txt', '--aws', '--profile', 'ops', '--stack', 'OnlyWorkflows'],
      { env, stdin: 'y' },
    );
    expect(noOutput).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'aws.output_missing: no stack output TableName in OnlyWorkflows (redeploy the stacks, or set CUTPOINT_TABLE_NAME)\n',
    });
    // Nothing of the profile's keys reaches a diagnostic.
    expect(`${missing.stderr}${noOutput.stderr}`).not.toMatch(/AKID|loopback-test-only/);
  });

  it('the adapter: DescribeStacks outputs by key and status; an unknown stack is undefined', async () => {
    const client = cloudFormationClientAt(cfn.endpoint);
    expect(await describeStack(client, 'CutpointWorkflows')).toEqual({
      name: 'CutpointWorkflows',
      status: 'UPDATE_COMPLETE',
      outputs: { DeliverWindowStateMachineArn: 'arn:aws:states:eu-west-3:123456789012:stateMachine:dw' },
    });
    expect(await describeStack(client, 'NoSuchStack')).toBeUndefined();
    client.destroy();
  });
});

/** The adapter's client, pointed at the loopback responder with the throw-away keys. */
function cloudFormationClientAt(endpoint: string): CloudFormationClient {
  return new CloudFormationClient({
    region: 'eu-west-3',
    endpoint,
    credentials: { accessKeyId: 'AKIDLOOPBACKTEST', secretAccessKey: 'loopback-test-only' },
  });
}
