/**
 * AWS list prices `cutpoint cost` multiplies the measured counts by: us-east-1, Lambda on
 * arm64, DynamoDB on-demand, S3 Standard, as published on the AWS pricing pages on the
 * date below (the on-demand DynamoDB prices are those after the November 2024 reduction).
 * Free tiers, tiered discounts, Savings Plans, storage, data transfer and CloudWatch are
 * left out: this is the marginal price of one unit of work. On the date below the Lambda
 * and DynamoDB prices were checked against copies of their pricing pages; the Step
 * Functions and S3 prices are their long-standing list prices, not re-checked there (no
 * copy of those pages was at hand). Re-check the pages and move the date when a price
 * changes; nothing here is fetched at run time.
 */
export const PRICES = {
  region: 'us-east-1',
  architecture: 'arm64',
  asOf: '2026-12-02',
  /** As the pricing pages state them (USD). */
  usd: {
    /** Step Functions Standard: per 1,000 state transitions. */
    standardPer1000Transitions: 0.025,
    /** Step Functions Express: per million executions. */
    expressPerMillionRequests: 1.0,
    /** Step Functions Express: per GB-second of execution, memory billed in 64 MB steps. */
    expressPerGbSecond: 0.00001667,
    /** Lambda: per million invocations. */
    lambdaPerMillionRequests: 0.2,
    /** Lambda arm64: per GB-second (the first 7.5 billion GB-s of a month). */
    lambdaArm64PerGbSecond: 0.0000133334,
    /** DynamoDB on-demand: per million write request units. */
    dynamodbPerMillionWriteUnits: 0.625,
    /** DynamoDB on-demand: per million read request units. */
    dynamodbPerMillionReadUnits: 0.125,
    /** S3 Standard: per 1,000 PUT, COPY, POST or LIST requests. */
    s3Per1000PutClass: 0.005,
    /** S3 Standard: per 1,000 GET, HEAD and other requests (DELETE is free). */
    s3Per1000GetClass: 0.0004,
  },
} as const;

/** Express executions are billed for memory in 64 MB steps; the flows here hold little state, so the minimum. */
export const EXPRESS_BILLED_MB = 64;
