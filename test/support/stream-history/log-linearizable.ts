import type { Op, OpHistory } from '../sched/op-history.js';

/**
 * The stream log's history checker: a schedule's client operations (appends, the
 * resolves that answered for them, reads; op-history.ts) against a sequential log — a
 * list of records, each append taking one contiguous range at the end, exactly once, at
 * some moment between its invoke and its completion (any moment after its invoke when its
 * completion is unknown). The durable commit chain (`chain`: which attempt holds which
 * offsets) and the records each attempt sent define the log; the history must be one
 * linearization of it:
 * - every outcome reported for an attempt is the chain's: KNOWN_COMMITTED exactly at the
 *   attempt's range in the chain, KNOWN_NOT_COMMITTED only for an attempt the chain lacks,
 *   and never both for one attempt;
 * - the chain is contiguous from the trim, no offset held twice (offsets never reused);
 * - real-time order: an append told KNOWN_COMMITTED before another append was invoked sits
 *   before it in the log;
 * - every read returns exactly the log's records at its offsets, contiguous (never a record
 *   of an attempt that did not commit, never a skip), and a committed end no earlier than
 *   the end of every append told KNOWN_COMMITTED before the read was invoked.
 * Returns what is broken, one line each (empty: the history is linearizable).
 */

export interface AppendValue {
  attempt: string;
  records: string[];
}

/** What an append or a resolve reported for its attempt (its completion's value). */
export interface OutcomeValue {
  status: 'KNOWN_COMMITTED' | 'KNOWN_NOT_COMMITTED' | 'MAY_HAVE_COMMITTED';
  start?: number;
  end?: number;
}

export interface ReadInvoke {
  from: number;
  maxRecords: number;
}

export interface ReadOk {
  records: string[];
  committedEnd: number;
}

export interface ChainLink {
  attemptId: string;
  start: number;
  end: number;
}

export function checkLogHistory(history: OpHistory, chain: readonly ChainLink[], trimOffset: number): string[] {
  const broken: string[] = [];
  const sent = new Map<string, string[]>();
  for (const { invoke } of history.pairs('append')) {
    const v = invoke.value as AppendValue;
    sent.set(v.attempt, v.records);
  }
  // The log the chain defines.
  const log = new Map<number, string>();
  const linkOf = new Map<string, ChainLink>();
  let next: number | undefined;
  for (const link of [...chain].sort((a, b) => a.start - b.start)) {
    if (next !== undefined && link.start !== next) broken.push(`the commit chain jumps from ${next} to ${link.start}`);
    next = link.end;
    if (linkOf.has(link.attemptId)) broken.push(`attempt ${link.attemptId} holds two ranges of the chain`);
    linkOf.set(link.attemptId, link);
    const records = sent.get(link.attemptId);
    if (!records || records.length !== link.end - link.start) {
      broken.push(
        `the chain gives ${link.attemptId} [${link.start}, ${link.end}), not the ${records?.length ?? 0} records it sent`,
      );
      continue;
    }
    records.forEach((r, i) => log.set(link.start + i, r));
  }
  const chainStart = Math.min(...chain.map((l) => l.start), Number.MAX_SAFE_INTEGER);
  // Every reported outcome is the chain's.
  const reported = new Map<string, string>();
  for (const f of ['append', 'resolve']) {
    for (const { invoke, completion } of history.pairs(f)) {
      if (completion?.type !== 'ok' && completion?.type !== 'fail') continue;
      const attempt = (invoke.value as { attempt: string }).attempt;
      const o = completion.value as OutcomeValue;
      if (o.status === 'MAY_HAVE_COMMITTED') continue;
      const link = linkOf.get(attempt);
      const said = `${f} (op ${completion.index}) told ${attempt} ${o.status}`;
      // A range wholly below the trim may have left the chain with its records (GC).
      const trimmedAway = !link && o.end !== undefined && o.end <= Math.max(trimOffset, chainStart);
      if (o.status === 'KNOWN_COMMITTED' && !trimmedAway && (link?.start !== o.start || link?.end !== o.end))
        broken.push(
          `${said} [${o.start}, ${o.end}), the chain holds ${link ? `[${link.start}, ${link.end})` : 'no range'}`,
        );
      if (o.status === 'KNOWN_NOT_COMMITTED' && link)
        broken.push(`${said}, yet the chain holds it at [${link.start}, ${link.end})`);
      const earlier = reported.get(attempt);
      if (earlier && earlier !== o.status) broken.push(`${attempt} was told ${earlier} and ${o.status}`);
      reported.set(attempt, o.status);
    }
  }
  // Real time: appends told committed before another's invoke come first; reads see them.
  const committedAt = history.pairs('append').flatMap(({ invoke, completion }) =>
    completion?.type === 'ok' && (completion.value as OutcomeValue).status === 'KNOWN_COMMITTED'
      ? [
          {
            attempt: (invoke.value as AppendValue).attempt,
            at: completion.index,
            end: (completion.value as OutcomeValue).end!,
          },
        ]
      : [],
  );
  for (const { invoke } of history.pairs('append')) {
    const later = linkOf.get((invoke.value as AppendValue).attempt);
    if (!later) continue;
    for (const done of committedAt) {
      const first = linkOf.get(done.attempt);
      if (done.at < invoke.index && first && first.start > later.start)
        broken.push(
          `${done.attempt} was told committed (op ${done.at}) before ${(invoke.value as AppendValue).attempt} was invoked (op ${invoke.index}), yet sits after it`,
        );
    }
  }
  for (const { invoke, completion } of history.pairs('read')) {
    if (completion?.type !== 'ok') continue;
    broken.push(...readBroken(invoke, completion, log, trimOffset, committedAt));
  }
  return broken;
}

function readBroken(
  invoke: Op,
  completion: Op,
  log: ReadonlyMap<number, string>,
  trimOffset: number,
  committedAt: ReadonlyArray<{ attempt: string; at: number; end: number }>,
): string[] {
  const { from } = invoke.value as ReadInvoke;
  const { records, committedEnd } = completion.value as ReadOk;
  const out: string[] = [];
  records.forEach((record, i) => {
    const offset = from + i;
    const held = log.get(offset);
    // Below the final trim the log is gone from the chain's view only if no link covers it.
    if (held === undefined && offset < trimOffset) return;
    if (held !== record)
      out.push(
        `read (op ${completion.index}) from ${from} returned ${record} at ${offset}; the log holds ${held ?? 'nothing'} there`,
      );
  });
  const seen = committedAt.filter((c) => c.at < invoke.index).reduce((m, c) => Math.max(m, c.end), 0);
  if (committedEnd < seen)
    out.push(
      `read (op ${completion.index}) saw committed end ${committedEnd}, yet an append ending at ${seen} was told committed before it`,
    );
  return out;
}
