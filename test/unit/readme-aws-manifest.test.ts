import { describe, expect, it } from 'vitest';
import { resolveBinding } from '../../src/delivery/bindings.js';
import { parseManifest, selectRoute } from '../../src/domain/delivery/manifest.js';
import { secretNameOf } from '../../src/domain/secrets.js';
import { type SecretsPort } from '../../src/ports/secrets.js';
import { fencedBlocks, markedBlock, markerNames, repoFile, section } from './readme-blocks.js';

/*
 * The first-deploy runbook (docs/deploy.md "Deploy and run on AWS") shows a route manifest for AWS
 * and the `aws secretsmanager create-secret` commands behind its bindings. Both must work as
 * written: the manifest through the real parser, each secret through the real binding
 * resolution a deployed Lambda runs (its SecretString answered from the docs, by name).
 */

const readme = repoFile('docs/deploy.md');
const runbook = section(readme, 'Deploy and run on AWS') ?? '';
const manifestBlock = markedBlock(runbook, 'aws-route-manifest');
if (!manifestBlock)
  throw new Error(
    'docs/deploy.md "Deploy and run on AWS" has no route manifest for AWS (a yaml block after <!-- aws-route-manifest -->)',
  );
const manifestText = manifestBlock.body;
const manifest = parseManifest(manifestText, '/etc/cutpoint/route.yaml');
/** A secret's ARN ends in its name, a dash and 6 random characters Secrets Manager adds. */
const nameOf = (arn: string): string => secretNameOf(arn).replace(/-[A-Za-z0-9]{6}$/, '');

/** `--name N --secret-string 'JSON'` of every documented create-secret, by secret name. */
function documentedSecrets(): Map<string, Record<string, unknown>> {
  const secrets = new Map<string, Record<string, unknown>>();
  for (const marker of markerNames(runbook, 'aws-secret')) {
    const command = markedBlock(runbook, `aws-secret: ${marker}`)!.body;
    const name = /aws secretsmanager create-secret --name (\S+)/.exec(command)?.[1];
    const json = /--secret-string '([^']*)'/.exec(command)?.[1];
    expect(name && json, `aws-secret: ${marker} names a secret and its JSON`).toBeTruthy();
    secrets.set(name!, JSON.parse(json!) as Record<string, unknown>);
  }
  return secrets;
}

describe('docs/deploy.md "Deploy and run on AWS": the first-deploy runbook', () => {
  it('the AWS route manifest parses: an SQL route and a ClickHouse exchange route, every binding a Secrets Manager ARN', () => {
    expect(Object.keys(manifest.routes).sort()).toEqual(['daily', 'lake_daily']);
    expect(selectRoute(manifest, 'daily').route.target.mode).toBe('replace_window');
    expect(selectRoute(manifest, 'lake_daily').route.target.mode).toBe('exchange');
    for (const binding of Object.values(manifest.bindings)) {
      expect(binding.secretArn, binding.name).toMatch(
        /^arn:aws:secretsmanager:[a-z0-9-]+:\d{12}:secret:cutpoint\/delivery\//,
      );
      expect(binding.urlEnv, `${binding.name}: the AWS manifest names no environment variable`).toBeUndefined();
    }
  });

  it('sources are named under cutpoint/delivery/source/, targets under cutpoint/delivery/target/', () => {
    for (const name of Object.keys(manifest.routes)) {
      const { sourceBinding, targetBinding } = selectRoute(manifest, name);
      expect(nameOf(sourceBinding.secretArn!)).toMatch(/^cutpoint\/delivery\/source\/[a-z0-9-]+$/);
      expect(nameOf(targetBinding.secretArn!)).toMatch(/^cutpoint\/delivery\/target\/[a-z0-9-]+$/);
    }
  });

  it("each binding's documented secret resolves to a connection of its kind, through the deployed resolution", async () => {
    const documented = documentedSecrets();
    const secrets: SecretsPort = {
      secretJson: async (arn) => {
        const json = documented.get(nameOf(arn));
        if (!json) throw new Error(`docs/deploy.md creates no secret named ${nameOf(arn)}`);
        return json;
      },
    };
    const schemes = { clickhouse: /^https:\/\//, postgres: /^postgres:\/\//, mssql: /^mssql:\/\// };
    for (const binding of Object.values(manifest.bindings)) {
      const settings = await resolveBinding(binding, { env: {}, secrets });
      expect(settings.url, binding.name).toMatch(schemes[binding.kind]);
      expect(settings.username, binding.name).toBeTruthy();
    }
    expect([...documented.keys()].sort()).toEqual(
      Object.values(manifest.bindings)
        .map((b) => nameOf(b.secretArn!))
        .sort(),
    );
  });

  it('bootstraps, deploys both stacks and subscribes operators to the incident and operations topics by stack output', () => {
    const commands = fencedBlocks(runbook)
      .filter((b) => b.lang === 'sh')
      .map((b) => b.body)
      .join('\n');
    expect(commands).toContain('npx cdk bootstrap aws://ACCOUNT/');
    expect(commands).toContain('npx cdk deploy --all');
    for (const output of ['IncidentTopicArn', 'OperationsTopicArn']) {
      expect(commands).toMatch(
        new RegExp(`aws sns subscribe --topic-arn "\\$\\(cp_out CutpointStateful ${output}\\)"`),
      );
    }
    expect(runbook).toContain('(flows.md)');
    expect(runbook).toContain('(runbook/README.md)');
  });
});
