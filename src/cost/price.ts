import { EXPRESS_BILLED_MB, PRICES } from './prices.js';

/**
 * Pure pricing of measured counts (src/cost/measure.ts) at the list prices of prices.ts.
 * DynamoDB is priced in request units from request counts: one read unit per read request
 * (a strongly consistent read of an item up to 4 KB), one write unit per write request
 * (up to 1 KB), two per transactional write — per item of the transaction; the meter
 * counts requests, not items, so a transaction of n items costs n times what is shown here
 * (the figures are a floor for transactions). Control-plane calls (DescribeTable) are not
 * billed per request.
 */

const DYNAMODB_READS = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem']);
const DYNAMODB_WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem']);
const DYNAMODB_TRANSACT_WRITES = new Set(['TransactWriteItems']);
const DYNAMODB_UNBILLED = new Set(['DescribeTable']);
const S3_PUT_CLASS = new Set(['PutObject', 'CopyObject', 'ListObjectsV2']);
const S3_GET_CLASS = new Set(['GetObject', 'HeadObject']);
const S3_FREE = new Set(['DeleteObject']);

export interface Usage {
  type: 'STANDARD' | 'EXPRESS';
  stateTransitions: number;
  executionMs: number;
  invocations: ReadonlyArray<{ placeholder: string; memoryMB: number; billedMs: number }>;
  requests: Record<string, number>;
}

export interface PricedUsage {
  stateTransitions: number;
  lambda: {
    invocations: number;
    gbSeconds: number;
    byStep: Record<string, { invocations: number; gbSeconds: number }>;
  };
  dynamodb: {
    readRequests: number;
    writeRequests: number;
    transactWriteRequests: number;
    readUnits: number;
    writeUnits: number;
  };
  s3: { putClassRequests: number; getClassRequests: number; freeRequests: number };
  /** Operations the price table does not know (none today; a new adapter call shows up here, not silently priced at zero). */
  unpriced: Record<string, number>;
  usd: {
    stepFunctions: number;
    lambdaRequests: number;
    lambdaDuration: number;
    dynamodb: number;
    s3: number;
    total: number;
  };
}

export function priceUsage(usage: Usage): PricedUsage {
  const byStep: PricedUsage['lambda']['byStep'] = {};
  let gbSeconds = 0;
  for (const i of usage.invocations) {
    const gbs = (i.memoryMB / 1024) * (i.billedMs / 1000);
    gbSeconds += gbs;
    const step = (byStep[i.placeholder] ??= { invocations: 0, gbSeconds: 0 });
    step.invocations++;
    step.gbSeconds += gbs;
  }
  for (const step of Object.values(byStep)) step.gbSeconds = round(step.gbSeconds, 6);
  const dynamodb = { readRequests: 0, writeRequests: 0, transactWriteRequests: 0, readUnits: 0, writeUnits: 0 };
  const s3 = { putClassRequests: 0, getClassRequests: 0, freeRequests: 0 };
  const unpriced: Record<string, number> = {};
  for (const [key, n] of Object.entries(usage.requests)) {
    const [service, operation = ''] = key.split('.');
    if (service === 'dynamodb' && DYNAMODB_READS.has(operation)) dynamodb.readRequests += n;
    else if (service === 'dynamodb' && DYNAMODB_WRITES.has(operation)) dynamodb.writeRequests += n;
    else if (service === 'dynamodb' && DYNAMODB_TRANSACT_WRITES.has(operation)) dynamodb.transactWriteRequests += n;
    else if (service === 's3' && S3_PUT_CLASS.has(operation)) s3.putClassRequests += n;
    else if (service === 's3' && S3_GET_CLASS.has(operation)) s3.getClassRequests += n;
    else if (service === 's3' && S3_FREE.has(operation)) s3.freeRequests += n;
    else if (!(service === 'dynamodb' && DYNAMODB_UNBILLED.has(operation))) unpriced[key] = n;
  }
  dynamodb.readUnits = dynamodb.readRequests;
  dynamodb.writeUnits = dynamodb.writeRequests + 2 * dynamodb.transactWriteRequests;
  const p = PRICES.usd;
  const stepFunctions =
    usage.type === 'STANDARD'
      ? (usage.stateTransitions * p.standardPer1000Transitions) / 1000
      : p.expressPerMillionRequests / 1e6 +
        (EXPRESS_BILLED_MB / 1024) * (Math.ceil(usage.executionMs) / 1000) * p.expressPerGbSecond;
  const usd = {
    stepFunctions,
    lambdaRequests: (usage.invocations.length * p.lambdaPerMillionRequests) / 1e6,
    lambdaDuration: gbSeconds * p.lambdaArm64PerGbSecond,
    dynamodb:
      (dynamodb.readUnits * p.dynamodbPerMillionReadUnits + dynamodb.writeUnits * p.dynamodbPerMillionWriteUnits) / 1e6,
    s3: (s3.putClassRequests * p.s3Per1000PutClass + s3.getClassRequests * p.s3Per1000GetClass) / 1000,
    total: 0,
  };
  usd.total = usd.stepFunctions + usd.lambdaRequests + usd.lambdaDuration + usd.dynamodb + usd.s3;
  return {
    stateTransitions: usage.stateTransitions,
    lambda: { invocations: usage.invocations.length, gbSeconds: round(gbSeconds, 6), byStep },
    dynamodb,
    s3,
    unpriced,
    usd: Object.fromEntries(Object.entries(usd).map(([k, v]) => [k, round(v, 12)])) as PricedUsage['usd'],
  };
}

function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
