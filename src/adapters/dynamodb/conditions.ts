import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { Expectation } from '../../ports/authority.js';

/** A DynamoDB condition with its placeholder maps, built from an expectation. */
export interface Condition {
  expression: string;
  names: Record<string, string>;
  values: Record<string, AttributeValue>;
}

/**
 * `absent` → the key is unused; `{ version, fence }` → exactly that version, and the
 * stored fence equals the caller's owner, session and epoch.
 */
export function conditionFor(expect: Expectation): Condition {
  if (expect === 'absent') {
    return { expression: 'attribute_not_exists(#pk)', names: { '#pk': 'pk' }, values: {} };
  }
  const names: Record<string, string> = { '#version': 'version' };
  const values: Record<string, AttributeValue> = marshall({ ':expectedVersion': expect.version });
  const clauses = ['#version = :expectedVersion'];
  if (expect.fence) {
    Object.assign(names, { '#fence': 'fence', '#owner': 'owner', '#session': 'session', '#epoch': 'epoch' });
    Object.assign(
      values,
      marshall({
        ':fenceOwner': expect.fence.owner,
        ':fenceSession': expect.fence.session,
        ':fenceEpoch': expect.fence.epoch,
      }),
    );
    clauses.push('#fence.#owner = :fenceOwner', '#fence.#session = :fenceSession', '#fence.#epoch = :fenceEpoch');
  }
  return { expression: clauses.join(' AND '), names, values };
}

/** `SET #version = :nextVersion, #a0 = :v0 …  REMOVE #a1 …` for an update. */
export function updateFor(
  nextVersion: number,
  set: Record<string, unknown>,
): { expression: string; names: Record<string, string>; values: Record<string, AttributeValue> } {
  const names: Record<string, string> = { '#nextVersionName': 'version' };
  const plain: Record<string, unknown> = { ':nextVersion': nextVersion };
  const sets = ['#nextVersionName = :nextVersion'];
  const removes: string[] = [];
  Object.entries(set).forEach(([attribute, value], i) => {
    if (attribute === 'pk' || attribute === 'sk' || attribute === 'version') {
      throw new Error(`update may not set key or version attribute "${attribute}"`);
    }
    names[`#a${i}`] = attribute;
    if (value === undefined) {
      removes.push(`#a${i}`);
    } else {
      plain[`:v${i}`] = value;
      sets.push(`#a${i} = :v${i}`);
    }
  });
  const expression = `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`;
  return {
    expression,
    names,
    values: marshall(plain, { removeUndefinedValues: true, convertClassInstanceToMap: true }),
  };
}
