export { GroupProducer, type AppendFn, type GroupReport, type ProducerOptions } from './group-producer.js';
export { DEFAULT_KNOBS, validateKnobs, type ProducerKnobs } from './knobs.js';
export { PRODUCER_HALTED, type MemberOutcome } from './member-outcome.js';
export { pipelinedProducer, type PipelinedProducerOptions } from './pipelined-producer.js';
