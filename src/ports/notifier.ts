/**
 * Tells operators that something needs them (a retained incident, custody held): one
 * message to a topic. Delivery is at-least-once and best effort; a notification is never
 * part of an exactly-once effect.
 */
export interface Notifier {
  /**
   * Publishes `message` as JSON. `subject` is a one-line summary for e-mail subscribers;
   * adapters trim it to what their service accepts (SNS: 100 characters).
   */
  publish(subject: string, message: Record<string, unknown>): Promise<void>;
}
