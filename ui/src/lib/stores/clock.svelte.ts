// The clock relative times ("5 min ago") are computed against; ticks once a minute while
// started, so idle windows wake up once a minute at most.
export class Clock {
  now = $state(Date.now());
  #timer: ReturnType<typeof setInterval> | undefined;

  start(): () => void {
    this.#timer ??= setInterval(() => (this.now = Date.now()), 60_000);
    return () => {
      clearInterval(this.#timer);
      this.#timer = undefined;
    };
  }
}

export const clock = new Clock();
