import { loadConfig, NODE_REGION_CONFIG_FILE_OPTIONS } from '@smithy/core/config';

/** Where the shared config and credentials files are (the CLI resolves the paths and checks the files first). */
export interface SharedConfigPaths {
  config: string;
  credentials: string;
}

/**
 * A profile's `region` read by the SDK's own config loader (`loadConfig` of
 * @smithy/core/config, the one every client uses for its region), from the files given,
 * never from the environment: the CLI ranks --region and the variables itself
 * (src/cli/aws-settings.ts `regionOf`). The SDK's rules therefore hold as they are: the
 * config file's `[profile NAME]` (or `[default]`), the credentials file's `[NAME]`, the
 * credentials file winning when both set a region, a profile name the SDK cannot parse
 * finding nothing. Absent files and an absent profile give undefined.
 */
export function profileRegion(profile: string, paths: SharedConfigPaths): Promise<string | undefined> {
  return loadConfig<string | undefined>(
    {
      environmentVariableSelector: () => undefined,
      configFileSelector: (section) => section.region,
      default: () => undefined,
    },
    {
      ...NODE_REGION_CONFIG_FILE_OPTIONS,
      profile,
      configFilepath: paths.config,
      filepath: paths.credentials,
      // The loader caches each file's text per process by path; a command reads the files as they are now.
      ignoreCache: true,
    },
  )();
}
