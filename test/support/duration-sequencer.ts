import { readFileSync } from 'node:fs';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Seconds each test file took in a measured full run (relative path → seconds), committed. */
export const DURATIONS_FILE = 'test/support/file-durations.json';

/**
 * Project by project, the heaviest project first, and longest file first within each. The
 * workers share the run, so the wall time is the largest worker's sum plus whatever one long
 * file adds at the end: vitest's own order on a clean clone (no cached results) is by file
 * size within a project — a small file that runs 160 schedules then starts last and runs
 * alone. Here each file's weight is its duration in this machine's vitest cache when there
 * is one, else in the committed table (`npm test` with CUTPOINT_WRITE_DURATIONS=1 rewrites
 * it, see plain-summary-reporter.ts), else its size as a stand-in.
 *
 * Projects stay together because vitest keeps a worker (its module graph, under
 * isolate: false) only while the next file in the queue is of the same project: ordered
 * across projects, a full run started 40 workers for 212 files, each importing the SDKs,
 * the flow runner or aws-cdk-lib again; grouped, at most one per worker and project. The small unit
 * and infra files at the end fill the workers' tail.
 */
export default class DurationSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const table = committedDurations();
    const cache = this.ctx.cache;
    const weight = (spec: TestSpecification): number => {
      const cached = cache.getTestSpecificationResult(spec);
      if (cached && !cached.failed) return cached.duration / 1000;
      const committed = table[relativeId(spec)];
      // Unknown files: ~1 s per 2 KB of test source, about the integration files' median.
      return committed ?? sizeOf(spec) / 2048;
    };
    return runOrder(files, (spec) => spec.project.name, weight);
  }
}

/** The heaviest project's files first (then by name, for a stable order), each project's longest file first. */
export function runOrder<T>(files: readonly T[], projectOf: (file: T) => string, weightOf: (file: T) => number): T[] {
  const weights = new Map(files.map((file) => [file, weightOf(file)]));
  const projects = new Map<string, number>();
  for (const file of files) projects.set(projectOf(file), (projects.get(projectOf(file)) ?? 0) + weights.get(file)!);
  const projectWeight = (file: T) => projects.get(projectOf(file))!;
  return [...files].sort(
    (a, b) =>
      projectWeight(b) - projectWeight(a) ||
      projectOf(a).localeCompare(projectOf(b)) ||
      weights.get(b)! - weights.get(a)!,
  );
}

function relativeId(spec: TestSpecification): string {
  const root = spec.project.config.root.replace(/\/$/, '');
  return spec.moduleId.startsWith(`${root}/`) ? spec.moduleId.slice(root.length + 1) : spec.moduleId;
}

function sizeOf(spec: TestSpecification): number {
  try {
    return readFileSync(spec.moduleId).byteLength;
  } catch {
    return 0;
  }
}

function committedDurations(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;
  } catch {
    return {};
  }
}
