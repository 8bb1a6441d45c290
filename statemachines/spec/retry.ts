/**
 * The one retry policy of every Task (the AWS Lambda retry guidance, asserted in
 * test/statemachines/asl.test.ts): a step's own transient outcomes (an effect that ended
 * unknown, failed or crashed at a cut point) and Lambda's unknown/timeout answers get four
 * tries with full jitter; Lambda service errors three, capped at 8 s; throttling eight,
 * capped at 60 s. `without` drops errors a step resolves itself (the commit's unknown
 * outcome goes to its probe); `with` adds errors the step's own reload settles.
 */
export interface Retrier {
  ErrorEquals: string[];
  IntervalSeconds: number;
  MaxAttempts: number;
  BackoffRate: number;
  MaxDelaySeconds?: number;
  JitterStrategy: 'FULL';
}

export interface RetryOptions {
  without?: readonly string[];
  with?: readonly string[];
}

/** A step's transient outcomes at a cut point (src/domain/errors.ts). */
export const STEP_TRANSIENT = ['Cutpoint.OutcomeUnknown', 'Cutpoint.WorkerCrashed', 'Cutpoint.EffectFailed'];
/** Lambda's answers for a lost or timed-out invocation. */
const INVOCATION_LOST = ['Lambda.Unknown', 'Sandbox.Timedout', 'States.Timeout'];
const LAMBDA_SERVICE = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.ClientExecutionTimeoutException',
];
const THROTTLED = ['Lambda.TooManyRequestsException'];

const minus = (errors: readonly string[], without: readonly string[] = []) =>
  errors.filter((e) => !without.includes(e));

/** A Standard flow's Task. */
export function stepRetry(options: RetryOptions = {}): Retrier[] {
  return [
    {
      ErrorEquals: [...minus([...STEP_TRANSIENT, ...INVOCATION_LOST], options.without), ...(options.with ?? [])],
      IntervalSeconds: 1,
      MaxAttempts: 4,
      BackoffRate: 2,
      JitterStrategy: 'FULL',
    },
    {
      ErrorEquals: LAMBDA_SERVICE,
      IntervalSeconds: 1,
      MaxAttempts: 3,
      BackoffRate: 2,
      MaxDelaySeconds: 8,
      JitterStrategy: 'FULL',
    },
    {
      ErrorEquals: THROTTLED,
      IntervalSeconds: 2,
      MaxAttempts: 8,
      BackoffRate: 2,
      MaxDelaySeconds: 60,
      JitterStrategy: 'FULL',
    },
  ];
}

/** An Express flow's Task (stream-append: the whole execution is bounded in seconds): one retrier, three tries, 4 s at most. */
export function expressRetry(options: RetryOptions = {}): Retrier[] {
  const errors = minus([...STEP_TRANSIENT, ...LAMBDA_SERVICE, ...THROTTLED, ...INVOCATION_LOST], options.without);
  return [
    {
      ErrorEquals: errors,
      IntervalSeconds: 1,
      MaxAttempts: 3,
      BackoffRate: 2,
      MaxDelaySeconds: 4,
      JitterStrategy: 'FULL',
    },
  ];
}

/** Starting a child execution (states:startExecution.sync): the Step Functions API's limits and transient errors. */
export function childStartRetry(): Retrier[] {
  return [
    {
      ErrorEquals: [
        'StepFunctions.ExecutionLimitExceededException',
        'StepFunctions.SdkClientException',
        'StepFunctions.AWSStepFunctionsException',
      ],
      IntervalSeconds: 5,
      MaxAttempts: 3,
      BackoffRate: 2,
      JitterStrategy: 'FULL',
    },
  ];
}
