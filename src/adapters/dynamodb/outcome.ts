/**
 * Sorts a DynamoDB failure into the authority's outcomes. A conditional-check failure is
 * a CONFLICT; a request that provably never applied (4xx: validation, throttling, access)
 * is a definite failure; anything else — timeouts, resets, 5xx, an unreadable response —
 * may have applied and is UNKNOWN.
 */
export type FailureClass = 'conflict' | 'definite' | 'unknown';

const DEFINITE = new Set([
  'ValidationException',
  'ResourceNotFoundException',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'ItemCollectionSizeLimitExceededException',
  'TransactionInProgressException',
  'IdempotentParameterMismatchException',
]);

export function classifyDynamoFailure(error: unknown): FailureClass {
  const name = (error as { name?: string } | undefined)?.name ?? '';
  if (name === 'ConditionalCheckFailedException') return 'conflict';
  if (name === 'TransactionCanceledException') return 'conflict';
  if (DEFINITE.has(name)) return 'definite';
  const status = (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
  if (status !== undefined && status >= 400 && status < 500) return 'definite';
  return 'unknown';
}
