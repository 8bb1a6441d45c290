import { readFileSync } from 'node:fs';
import { RemovalPolicy } from 'aws-cdk-lib';
import * as z from 'zod';
import { parseBackoffPolicy } from '../src/domain/delivery/recovery-backoff.js';
import { MAX_RETENTION_DAYS } from '../src/domain/delivery/work-objects.js';
import { ConfigError } from '../src/domain/errors.js';
import { DEFAULT_STAGE, STAGE_NAME } from '../src/domain/stage.js';
import { deliverySecretsOf, gcGraceOf, networkConfigOf, type ContextGetter } from './app-context.js';
import type { CutpointStageProps } from './cutpoint-stage.js';
import { maintenanceConfigOf } from './maintenance-schedule.js';
import { repoPath } from './repo.js';

/**
 * The deploy settings, committed (cutpoint.config.json at the repository root, docs/deploy.md
 * "Deploy and run on AWS"): one entry per stage, so a redeploy without flags reproduces the last
 * deployed shape and changing a setting is a diff. Each setting is also a CDK context key
 * (`-c cutpoint:<setting>=…`) that overrides the file for one deploy; the values are
 * validated by the same readers (infra/app-context.ts) with the same infra.* codes.
 */
const list = z.union([z.string(), z.array(z.string())]);
const StageSettings = z.strictObject({
  vpcId: z.string().optional(),
  subnetIds: list.optional(),
  securityGroupIds: list.optional(),
  vpcEndpoints: z.string().optional(),
  routeTableIds: list.optional(),
  deliverySourceSecretArns: list.optional(),
  deliveryTargetSecretArns: list.optional(),
  deliverySecretArns: list.optional(),
  secretPrefix: z.string().optional(),
  maintenanceLanes: list.optional(),
  maintenanceRateMinutes: z.union([z.number(), z.string()]).optional(),
  gcGrace: z.string().optional(),
  chunkRetentionDays: z.union([z.number(), z.string()]).optional(),
  recoveryBackoff: z.union([z.record(z.string(), z.number()), z.string()]).optional(),
  runbookBaseUrl: z.string().optional(),
  alarmEmails: list.optional(),
  removalPolicy: z.enum(['retain', 'destroy']).optional(),
  gamedayFaults: z.union([z.boolean(), z.enum(['true', 'false'])]).optional(),
});
export type StageSettings = z.infer<typeof StageSettings>;
const StageConfigFile = z.strictObject({
  stages: z.record(z.string(), StageSettings).refine((s) => Object.keys(s).length > 0, 'names no stage'),
});
export type StageConfigFile = z.infer<typeof StageConfigFile>;

/** The settings a `-c cutpoint:<setting>` may override. */
export const SETTINGS = Object.keys(StageSettings.shape) as Array<keyof StageSettings>;
/** `-c cutpoint:config=path`: another settings file. */
export const CONFIG_FILE = 'cutpoint.config.json';

/** The committed settings file (or `path`), parsed and checked; infra.config_unreadable / infra.config_invalid. */
export function readStageConfig(path = repoPath(CONFIG_FILE)): StageConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError('infra.config_unreadable', `${path}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError('infra.config_invalid', `${path}: not JSON: ${(error as Error).message}`);
  }
  return parseStageConfig(value, path);
}

export function parseStageConfig(value: unknown, where = CONFIG_FILE): StageConfigFile {
  const parsed = StageConfigFile.safeParse(value);
  if (!parsed.success) throw new ConfigError('infra.config_invalid', `${where}: ${z.prettifyError(parsed.error)}`);
  for (const name of Object.keys(parsed.data.stages)) {
    if (name !== DEFAULT_STAGE && !STAGE_NAME.test(name))
      throw new ConfigError(
        'infra.stage_invalid',
        `${where}: stage ${JSON.stringify(name)}: lowercase letters and digits, a letter first, at most 12 (or ${DEFAULT_STAGE})`,
      );
  }
  return parsed.data;
}

/**
 * The stages the app builds: every stage of the file, or only `-c cutpoint:stage=NAME`.
 * A `-c cutpoint:<setting>` overrides that setting of the one stage built; with several
 * stages it would be ambiguous (infra.context_ambiguous).
 */
export function stagesOf(config: StageConfigFile, context: ContextGetter): CutpointStageProps[] {
  const only = context('cutpoint:stage');
  const names = Object.keys(config.stages);
  if (only !== undefined && !names.includes(String(only)))
    throw new ConfigError(
      'infra.stage_unknown',
      `cutpoint:stage=${String(only)} is not a stage of ${CONFIG_FILE} (${names.join(', ')})`,
    );
  const chosen = only === undefined ? names : [String(only)];
  const overrides = SETTINGS.filter((key) => context(`cutpoint:${key}`) !== undefined);
  if (overrides.length && chosen.length > 1)
    throw new ConfigError(
      'infra.context_ambiguous',
      `-c cutpoint:${overrides[0]} would apply to ${chosen.length} stages: name one with -c cutpoint:stage=NAME`,
    );
  return chosen.map((name) => stageProps(name, config.stages[name] ?? {}, context));
}

/** One stage's props: the file's settings under the context's overrides, read by the infra.* readers. */
function stageProps(name: string, settings: StageSettings, context: ContextGetter): CutpointStageProps {
  const get: ContextGetter = (key) => {
    const given = context(key);
    if (given !== undefined) return given;
    return key.startsWith('cutpoint:') ? settings[key.slice('cutpoint:'.length) as keyof StageSettings] : undefined;
  };
  const network = networkConfigOf(get);
  const deliverySecrets = deliverySecretsOf(get);
  const gcGrace = gcGraceOf(get);
  const maintenance = maintenanceConfigOf(get('cutpoint:maintenanceLanes'), get('cutpoint:maintenanceRateMinutes'));
  const secretPrefix = get('cutpoint:secretPrefix');
  const retention = get('cutpoint:chunkRetentionDays');
  const backoff = get('cutpoint:recoveryBackoff');
  const runbookUrl = get('cutpoint:runbookBaseUrl');
  const emails = get('cutpoint:alarmEmails');
  const removal = get('cutpoint:removalPolicy');
  const gameday = get('cutpoint:gamedayFaults');
  if (gameday !== undefined && ![true, false, 'true', 'false'].includes(gameday as never))
    throw new ConfigError('infra.gameday_faults_invalid', 'cutpoint:gamedayFaults must be true or false');
  if (removal !== undefined && removal !== 'retain' && removal !== 'destroy')
    throw new ConfigError('infra.removal_policy_invalid', 'cutpoint:removalPolicy must be retain or destroy');
  return {
    stage: name,
    ...(network ? { network } : {}),
    ...(deliverySecrets.source || deliverySecrets.target ? { deliverySecrets } : {}),
    ...(gcGrace ? { gcGrace } : {}),
    ...(maintenance ? { maintenance } : {}),
    ...(retention !== undefined ? { chunkRetentionDays: retentionSetting(retention) } : {}),
    ...(backoff !== undefined ? { recoveryBackoff: parseBackoffPolicy(backoff) } : {}),
    ...(runbookUrl !== undefined ? { runbookBaseUrl: runbookUrlSetting(runbookUrl) } : {}),
    ...(secretPrefix !== undefined ? { secretPrefix: secretPrefixSetting(secretPrefix) } : {}),
    ...(emails !== undefined ? { alarms: { emails: emailsOf(emails) } } : {}),
    ...(removal === 'destroy' ? { removalPolicy: RemovalPolicy.DESTROY } : {}),
    ...(gameday === true || gameday === 'true' ? { gamedayFaults: true } : {}),
  };
}

function runbookUrlSetting(value: unknown): string {
  const text = String(value).trim();
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || url.protocol !== 'https:' || url.search || url.hash)
    throw new ConfigError(
      'infra.runbook_base_url_invalid',
      'cutpoint:runbookBaseUrl must be an https URL of a published copy of docs/runbook, without query or fragment',
    );
  return text.replace(/\/+$/, '');
}

function retentionSetting(value: unknown): number {
  const days = typeof value === 'number' ? value : /^\d{1,4}$/.test(String(value)) ? Number(value) : NaN;
  if (!Number.isInteger(days) || days < 1 || days > MAX_RETENTION_DAYS)
    throw new ConfigError(
      'infra.chunk_retention_invalid',
      `cutpoint:chunkRetentionDays must be a whole number of days from 1 to ${MAX_RETENTION_DAYS}`,
    );
  return days;
}

function secretPrefixSetting(value: unknown): string {
  const prefix = String(value).trim();
  if (!/^[A-Za-z0-9_+=.@-][A-Za-z0-9/_+=.@-]*\/$/.test(prefix))
    throw new ConfigError(
      'infra.secret_prefix_invalid',
      'cutpoint:secretPrefix must be a secret name prefix ending in / (cutpoint/prod/delivery/)',
    );
  return prefix;
}

function emailsOf(value: unknown): string[] {
  const emails = (Array.isArray(value) ? value : String(value).split(',')).map((e) => String(e).trim());
  if (emails.some((e) => !z.email().safeParse(e).success))
    throw new ConfigError('infra.alarm_emails_invalid', 'cutpoint:alarmEmails must list e-mail addresses');
  return emails;
}
