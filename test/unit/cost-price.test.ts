import { describe, expect, it } from 'vitest';
import { priceUsage } from '../../src/cost/price.js';
import { PRICES } from '../../src/cost/prices.js';

/** `cutpoint cost`'s pricing: measured counts × the dated list prices, nothing hard-coded per flow. */
describe('cost pricing', () => {
  it('a Standard execution: transitions, Lambda requests and GB-s at its memory, DynamoDB units (2 per transactional write), S3 by class', () => {
    const priced = priceUsage({
      type: 'STANDARD',
      stateTransitions: 1000,
      executionMs: 5000,
      invocations: [
        { placeholder: 'A', memoryMB: 1024, billedMs: 2000 },
        { placeholder: 'A', memoryMB: 1024, billedMs: 1000 },
        { placeholder: 'B', memoryMB: 512, billedMs: 1000 },
      ],
      requests: {
        'dynamodb.GetItem': 3,
        'dynamodb.Query': 1,
        'dynamodb.PutItem': 2,
        'dynamodb.TransactWriteItems': 4,
        'dynamodb.DescribeTable': 1,
        's3.PutObject': 600,
        's3.ListObjectsV2': 400,
        's3.GetObject': 2000,
        's3.HeadObject': 500,
        's3.DeleteObject': 7,
      },
    });
    expect(priced.lambda).toEqual({
      invocations: 3,
      gbSeconds: 3.5,
      byStep: { A: { invocations: 2, gbSeconds: 3 }, B: { invocations: 1, gbSeconds: 0.5 } },
    });
    expect(priced.dynamodb).toEqual({
      readRequests: 4,
      writeRequests: 2,
      transactWriteRequests: 4,
      readUnits: 4,
      writeUnits: 10,
    });
    expect(priced.s3).toEqual({ putClassRequests: 1000, getClassRequests: 2500, freeRequests: 7 });
    expect(priced.unpriced).toEqual({});
    expect(priced.usd.stepFunctions).toBeCloseTo(0.025, 9); // 1,000 transitions
    expect(priced.usd.lambdaRequests).toBeCloseTo(0.6e-6, 11);
    expect(priced.usd.lambdaDuration).toBeCloseTo(3.5 * 0.0000133334, 11);
    expect(priced.usd.dynamodb).toBeCloseTo((4 * 0.125 + 10 * 0.625) / 1e6, 11);
    expect(priced.usd.s3).toBeCloseTo(0.005 + 2.5 * 0.0004, 9);
    expect(priced.usd.total).toBeCloseTo(
      priced.usd.stepFunctions +
        priced.usd.lambdaRequests +
        priced.usd.lambdaDuration +
        priced.usd.dynamodb +
        priced.usd.s3,
      9,
    );
  });

  it('an Express execution: one request plus its duration at 64 MB; an operation the table does not know is reported, not priced at zero silently', () => {
    const priced = priceUsage({
      type: 'EXPRESS',
      stateTransitions: 3,
      executionMs: 1999.2,
      invocations: [],
      requests: { 'sqs.SendMessage': 2 },
    });
    expect(priced.usd.stepFunctions).toBeCloseTo(1e-6 + (64 / 1024) * 2 * 0.00001667, 11);
    expect(priced.unpriced).toEqual({ 'sqs.SendMessage': 2 });
  });

  it('the price table is dated and names its region and architecture', () => {
    expect(PRICES).toMatchObject({ region: 'us-east-1', architecture: 'arm64' });
    expect(PRICES.asOf).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
