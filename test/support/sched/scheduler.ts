import { AsyncLocalStorage } from 'node:async_hooks';
import { ArmedFaultInjector } from '../../../src/adapters/fault-injector.js';
import type { FaultInjector } from '../../../src/ports/faults.js';
import { Prng } from '../prng.js';
import { ScheduleStall } from './errors.js';
import { letTurnsPass, Turn } from './turn.js';
import {
  DEFAULTS,
  FAULT_CHOICES,
  START,
  type Actor,
  type FaultChoice,
  type SchedulerOptions,
  type Ticket,
} from './scheduler-types.js';

export { FAULT_CHOICES, START, type Actor, type FaultChoice, type SchedulerOptions } from './scheduler-types.js';

/**
 * The one deterministic fault scheduler. Every actor of a schedule — a flow execution, one
 * Lambda invocation of a Task, an operator's command, a reader, a zombie — runs as an
 * actor; every effect it makes goes through the stores' one FaultInjector
 * (`scheduler.faults`), which parks the actor at the effect's cut point, and every read of
 * the authority or the object store parks it too (`read`: a scheduling point, never faulted). The scheduler lets
 * exactly one actor run at a time: when the running one parks (or ends, or waits on a
 * child), a seeded PRNG picks which parked actor moves next, and whether its effect faults
 * and how (crash-before, crash-after, lose-response, fail, lose-request; `delay` holds it
 * back while the others move). The same seed gives the same choices, so a failing seed
 * replays.
 *
 * Actors are told apart by AsyncLocalStorage: an actor's body, and everything it awaits,
 * carries it. A fan-out inside one actor (GC's parallel deletes, a part's chunk write and
 * load) parks each thread as it arrives; when the actor is picked, all its parked threads
 * move at once (each with its own fault draw): such steps interleave in the order their
 * I/O returns, so they may not replay move for move.
 */

export class Scheduler {
  readonly rng: Prng;
  readonly trace: string[] = [];
  /** Per cut point: hits, and faults by kind; the soak's coverage. */
  readonly hits = new Map<string, number>();
  /** Per read point (`read`): how many reads parked there and moved. */
  readonly reads = new Map<string, number>();
  readonly faultsFired = new Map<string, number>();
  /** Actor events by kind (zombie, duplicate-invocation, duplicate-start, operator-race, ...): the soak's coverage of actors. */
  readonly events = new Map<string, number>();
  decisions = 0;
  injected = 0;
  readonly faults: FaultInjector = { at: (cutPoint, effect) => this.at(cutPoint, effect) };
  private readonly options: Required<Omit<SchedulerOptions, 'faultsAt' | 'beforePick'>> &
    Pick<SchedulerOptions, 'faultsAt' | 'beforePick'>;
  private readonly als = new AsyncLocalStorage<Actor>();
  private readonly turn: Turn;
  private readonly actors: Actor[] = [];
  private parked: Ticket[] = [];
  private seq = 0;
  private live = false;

  constructor(
    readonly seed: number,
    options: SchedulerOptions = {},
  ) {
    this.rng = new Prng(seed);
    this.options = { ...DEFAULTS, ...options };
    this.turn = new Turn(this.options.stallMs);
  }

  /** The actor running the caller's code, if any. */
  current(): Actor | undefined {
    return this.als.getStore();
  }

  note(text: string): void {
    this.trace.push(`      ${text}`);
  }

  /** Counts one actor event of `kind` (and notes it). */
  count(kind: string, text?: string): void {
    this.events.set(kind, (this.events.get(kind) ?? 0) + 1);
    if (text) this.note(text);
  }

  /** A top-level actor (a flow execution, an operator, a reader): parked at START until picked. */
  spawn<T>(name: string, body: () => Promise<T>): Promise<T> {
    return this.start(name, body, undefined);
  }

  /**
   * A child actor the caller waits for (one Lambda invocation of a Task): the caller stops
   * running until the child ends (or is detached by `onPick`, see invocations.ts).
   */
  call<T>(name: string, body: () => Promise<T>, onPick?: Actor['onPick']): Promise<T> {
    const parent = this.current();
    // Outside a schedule (a settle phase, a replay's epilogue) the invocation simply runs.
    if (!parent || !this.live) return body();
    parent.waiting++;
    const result = this.start(name, body, parent, onPick);
    this.turn.yielded(parent);
    return result;
  }

  /** Detaches a parked child: its parent resumes (the caller rejects the parent's wait). */
  detach(child: Actor): void {
    // An ended child (an orphan fan-out thread still parked) was already waited for.
    if (child.detached || child.done || !child.parent) return;
    child.detached = true;
    child.parent.waiting--;
  }

  /** Runs every actor to its end, one move at a time. Throws ScheduleStall on a stall or livelock. */
  async run(): Promise<void> {
    this.live = true;
    try {
      for (;;) {
        await letTurnsPass();
        if (this.parked.length === 0) {
          const stuck = this.actors.filter((a) => !a.done && a.waiting === 0);
          if (stuck.length === 0) return;
          // One is still running (a read in flight after a fan-out's threads moved together): wait until it parks or ends.
          this.turn.mover = undefined;
          await this.turn.moved().catch(() => {
            throw new ScheduleStall(`no actor is parked, yet ${stuck.map((a) => a.name).join(', ')} never ended`);
          });
          continue;
        }
        if (++this.decisions > this.options.maxDecisions)
          throw new ScheduleStall(`more than ${this.options.maxDecisions} decisions: a livelock`);
        this.options.beforePick?.(this);
        const ticket = this.pick();
        if (ticket.cutPoint !== START && !ticket.actor.detached && !ticket.actor.done && ticket.actor.onPick) {
          const parent = ticket.actor.parent;
          const moved = this.turn.moved();
          if (ticket.actor.onPick(ticket.actor, ticket.cutPoint)) {
            // The zombie stays parked where it was; its parent runs on (the Task failed with States.Timeout).
            this.parked.push(ticket);
            this.trace.push(
              `${this.decisions} ${ticket.actor.name} @ ${ticket.cutPoint}: the Task timed out; the invocation runs on as a zombie`,
            );
            this.events.set('zombie', (this.events.get('zombie') ?? 0) + 1);
            this.turn.mover = parent;
            if (parent && !parent.done && parent.waiting === 0) await moved;
            else this.turn.cancel();
            continue;
          }
          this.turn.cancel();
        }
        if (ticket.cutPoint !== START && this.parked.length > 0 && this.rng.chance(this.options.delayRate)) {
          ticket.actor.delayedUntil = this.decisions + this.rng.int(1, 4);
          this.parked.push(ticket);
          this.trace.push(`${this.decisions} ${ticket.actor.name} @ ${ticket.cutPoint}: delay`);
          continue;
        }
        // A fan-out's threads (GC's page of roots) move together: one thread left parked while
        // another ends its share would leave the actor waiting on it with nobody moving. A
        // read moves alone, so another actor's write may land between two reads of one
        // fan-out (afterFanOutMove ends the turn of an actor left waiting on its sibling).
        const siblings =
          ticket.cutPoint === START || ticket.read ? [] : this.parked.filter((t) => t.actor === ticket.actor);
        this.parked = this.parked.filter((t) => !siblings.includes(t));
        const moving = [ticket, ...siblings].map((t) => ({ t, fault: this.faultFor(t) }));
        for (const { t, fault } of moving)
          this.trace.push(`${this.decisions} ${t.actor.name} @ ${t.cutPoint}${fault ? ` !${fault}` : ''}`);
        const moved = this.turn.moved();
        this.turn.mover = ticket.actor;
        for (const { t, fault } of moving) t.wake(fault);
        await moved;
      }
    } finally {
      this.live = false;
    }
  }

  /** Lets every parked actor run on uncontrolled (after a failure, so nothing hangs). */
  release(): void {
    this.live = false;
    for (const t of this.parked.splice(0)) t.wake(undefined);
  }

  private start<T>(
    name: string,
    body: () => Promise<T>,
    parent: Actor | undefined,
    onPick?: Actor['onPick'],
  ): Promise<T> {
    const actor: Actor = {
      id: this.actors.length,
      name,
      parent,
      detached: false,
      done: false,
      waiting: 0,
      delayedUntil: 0,
      parks: 0,
      onPick,
    };
    this.actors.push(actor);
    const started = new Promise<FaultChoice | undefined>((wake) =>
      this.parked.push({ actor, cutPoint: START, seq: this.seq++, wake }),
    );
    const result = this.als.run(actor, async () => {
      await started;
      return body();
    });
    const end = (): void => this.ended(actor);
    result.then(end, end);
    return result;
  }

  private ended(actor: Actor): void {
    actor.done = true;
    const parent = actor.parent;
    if (parent && !actor.detached) {
      parent.waiting--;
      // The parent's wait is over: it runs on, holding the turn, unless it waits on other children.
      if (parent.waiting === 0) {
        if (this.turn.mover === actor) this.turn.mover = parent;
        return;
      }
    }
    this.turn.yielded(actor);
  }

  /**
   * A read of the authority or the object store (SchedStores): a scheduling point like an
   * effect — the actor parks, and the PRNG may move others before the read runs — but never
   * faulted. So a schedule can put a write between two reads an actor makes, which parking
   * at effects alone never does (reads ran inside an actor's move).
   */
  async read<T>(point: string, read: () => Promise<T>): Promise<T> {
    const actor = this.als.getStore();
    if (!actor || !this.live) return read();
    actor.parks++;
    await new Promise<FaultChoice | undefined>((wake) => {
      this.parked.push({ actor, cutPoint: point, seq: this.seq++, read: true, wake });
      this.turn.yielded(actor);
    });
    this.reads.set(point, (this.reads.get(point) ?? 0) + 1);
    const decision = this.decisions;
    try {
      return await read();
    } finally {
      this.afterFanOutMove(actor, decision);
    }
  }

  private async at<T>(cutPoint: string, effect: () => Promise<T>): Promise<T> {
    const actor = this.als.getStore();
    if (!actor || !this.live) return effect();
    actor.parks++;
    const fault = await new Promise<FaultChoice | undefined>((wake) => {
      this.parked.push({ actor, cutPoint, seq: this.seq++, wake });
      this.turn.yielded(actor);
    });
    this.hits.set(cutPoint, (this.hits.get(cutPoint) ?? 0) + 1);
    const decision = this.decisions;
    try {
      if (!fault) return await effect();
      this.faultsFired.set(fault, (this.faultsFired.get(fault) ?? 0) + 1);
      return await new ArmedFaultInjector([{ cutPoint, kind: fault, times: 1, fromHit: 1, delayMs: 0 }]).at(
        cutPoint,
        effect,
      );
    } finally {
      this.afterFanOutMove(actor, decision);
    }
  }

  /**
   * A fan-out thread (one of an actor's Promise.all branches) whose effect just ran while a
   * sibling is still parked, or after its actor ended: when nothing moves on (the actor neither parks again, ends, nor
   * waits within a few turns), the actor is waiting for that sibling, so its turn is over.
   * Without this the scheduler would wait for a park that only its own next pick can bring.
   */
  private afterFanOutMove(actor: Actor, decision: number): void {
    if (actor.done) {
      // An orphan thread: its actor ended (a sibling failed the Promise.all) while it was parked.
      void letTurnsPass().then(() => {
        if (this.live && this.decisions === decision) this.turn.yielded(actor);
      });
      return;
    }
    if (!this.parked.some((t) => t.actor === actor)) return;
    const parks = actor.parks;
    void letTurnsPass().then(() => {
      if (
        this.live &&
        this.decisions === decision &&
        actor.parks === parks &&
        !actor.done &&
        this.parked.some((t) => t.actor === actor)
      )
        this.turn.yielded(actor);
    });
  }

  private pick(): Ticket {
    const ready = this.parked.filter((t) => t.actor.delayedUntil <= this.decisions);
    const from = (ready.length ? ready : this.parked).sort((a, b) => a.seq - b.seq);
    const ticket = this.rng.pick(from);
    this.parked = this.parked.filter((t) => t !== ticket);
    return ticket;
  }

  private faultFor(ticket: Ticket): FaultChoice | undefined {
    if (ticket.cutPoint === START || ticket.read || this.injected >= this.options.maxFaults) return undefined;
    const kinds = this.options.faultsAt?.(ticket.cutPoint, ticket.actor) ?? FAULT_CHOICES;
    if (kinds.length === 0 || !this.rng.chance(this.options.faultRate)) return undefined;
    this.injected++;
    return this.rng.pick(kinds);
  }
}
