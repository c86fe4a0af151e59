// VS Code shows one quick input at a time: opening a second one silently hides the first. So
// prompts wait their turn here, and `cancel(id)` (mcp-sidecar/cancelPrompt, or the request's
// own cancellation) drops a waiting prompt or closes the one on screen. Pure.

export interface PromptHandle {
  /** Set once the prompt was cancelled from outside. */
  readonly cancelled: boolean;
  /** Called (once) when the prompt is cancelled while it is on screen. */
  onCancel(hook: () => void): void;
}

interface Task {
  id: string;
  run: (handle: PromptHandle) => Promise<unknown>;
  dismissed: unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  handle: Handle;
}

class Handle implements PromptHandle {
  cancelled = false;
  private hooks: (() => void)[] = [];
  onCancel(hook: () => void): void {
    if (this.cancelled) hook();
    else this.hooks.push(hook);
  }
  fire(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    for (const hook of this.hooks.splice(0)) hook();
  }
}

export class PromptQueue {
  private waiting: Task[] = [];
  private active: Task | undefined;

  /** Runs `run` when no other prompt is on screen; a prompt cancelled before that gets `dismissed`. */
  run<T>(id: string, run: (handle: PromptHandle) => Promise<T>, dismissed: T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        id,
        run,
        dismissed,
        resolve: resolve as (value: unknown) => void,
        reject,
        handle: new Handle(),
      });
      this.pump();
    });
  }

  /** Cancels the prompt with this id; false when there is none. */
  cancel(id: string): boolean {
    const i = this.waiting.findIndex((t) => t.id === id);
    if (i >= 0) {
      const [task] = this.waiting.splice(i, 1);
      task.handle.fire();
      task.resolve(task.dismissed);
      return true;
    }
    if (this.active?.id === id) {
      this.active.handle.fire();
      return true;
    }
    return false;
  }

  /** Cancels everything (the sidecar went away). */
  cancelAll(): void {
    for (const task of this.waiting.splice(0)) {
      task.handle.fire();
      task.resolve(task.dismissed);
    }
    this.active?.handle.fire();
  }

  get size(): number {
    return this.waiting.length + (this.active ? 1 : 0);
  }

  get activeId(): string | undefined {
    return this.active?.id;
  }

  private pump(): void {
    if (this.active) return;
    const task = this.waiting.shift();
    if (!task) return;
    this.active = task;
    let run: Promise<unknown>;
    try {
      run = Promise.resolve(task.run(task.handle));
    } catch (error) {
      run = Promise.reject(error);
    }
    const settle = (answer: () => void) => {
      // Cleared before answering, so an answered prompt can no longer be cancelled.
      this.active = undefined;
      answer();
      this.pump();
    };
    run.then(
      (value) => settle(() => task.resolve(value)),
      (error) => settle(() => task.reject(error)),
    );
  }
}
