import type { Notifier } from '../../src/ports/notifier.js';

export interface RecordedNotice {
  subject: string;
  message: Record<string, unknown>;
}

/** A Notifier that keeps what it was given (for code whose notices a test reads or expects none of). */
export function recordingNotifier(): Notifier & { notices: RecordedNotice[] } {
  const notices: RecordedNotice[] = [];
  return {
    notices,
    publish: (subject, message) => {
      notices.push({ subject, message });
      return Promise.resolve();
    },
  };
}
