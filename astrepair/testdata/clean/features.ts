import { EventEmitter } from "events";
import * as path from "path";
import type { Options } from "./options";

export interface Job {
  id: string;
  run(ctx: Context): Promise<void>;
}

interface Context {
  signal: AbortSignal;
}

export enum State {
  Idle,
  Running,
  Done = "done",
}

type Handler<T> = (job: T) => void;

const DEFAULTS: Options = {
  retries: 3,
  delay: 100,
};

function decorate(target: any, key: string): void {
  console.log(key);
}

export abstract class Scheduler<T extends Job> extends EventEmitter {
  private queue: T[] = [];
  protected state: State = State.Idle;

  constructor(private readonly name: string, opts?: Partial<Options>) {
    super();
    this.opts = { ...DEFAULTS, ...opts };
  }

  @decorate
  add(job: T): void {
    this.queue.push(job);
  }

  abstract next(): T | undefined;

  async run(handler: Handler<T>): Promise<number> {
    let count = 0;
    for (const job of this.queue) {
      try {
        handler(job);
        count++;
      } catch (err) {
        console.error(err);
      } finally {
        this.emit("done", job);
      }
    }
    switch (this.state) {
      case State.Idle:
        this.state = State.Running;
        break;
      case State.Running:
      default:
        return count;
    }
    const names = this.queue
      .map((j) => j.id)
      .filter((id) => id.length > 0);
    if (names.length === 0) {
      return 0;
    } else if (names.length > 10) {
      return 10;
    } else {
      return names.length;
    }
  }
}

export function join(...parts: string[]): string {
  return path.join(...parts);
}

export default Scheduler;
