/**
 * Every effect (and the observation read) of a ClickHouse EXCHANGE publication, named for
 * the fault injector (docs/rules.md#governance-cut-points). Registered in src/cut-points.ts.
 */
export const PUBLICATION_CUT_POINTS = {
  candidateCreate: 'publication.candidate.create',
  loadInsert: 'publication.load.insert',
  candidateFill: 'publication.candidate.fill',
  dispatchIntent: 'publication.dispatch.intent',
  exchange: 'publication.exchange',
  observe: 'publication.observe',
  fenceRename: 'publication.fence.rename',
  commitRecord: 'publication.commit.record',
  predecessorDrop: 'publication.predecessor.drop',
} as const;

export type PublicationCutPoint = (typeof PUBLICATION_CUT_POINTS)[keyof typeof PUBLICATION_CUT_POINTS];
