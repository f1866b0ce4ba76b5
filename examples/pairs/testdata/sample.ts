/**
 * Parse a duration such as "5m" into milliseconds.
 * @param text the duration to parse
 */
export function parseDuration(text: string): number {
  const unit = text.slice(-1);
  // eslint-disable-next-line no-magic-numbers
  const value = Number(text.slice(0, -1));
  // multiply by the length of one unit in milliseconds
  return value * (unit === "m" ? 60000 : 1000);
}

export class Timer {
  /** Start counting from now and remember the start time. */
  start(): void {
    this.t0 = Date.now();
  }

  elapsed(): number {
    return Date.now() - this.t0;
  }
}

// Format milliseconds as a short human readable string.
const format = (ms: number): string => {
  return `${ms}ms`;
};
