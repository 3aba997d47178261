/**
 * The last lines a process wrote (its stderr), bounded in lines and bytes, so that a server that dies at startup can
 * say why in the connection error without the adapter holding on to unbounded output.
 */
export class OutputTail {
  private readonly maxLines: number;
  private readonly maxChars: number;
  private readonly complete: string[] = [];
  private partial = "";

  constructor(maxLines = 20, maxChars = 4_096) {
    this.maxLines = maxLines;
    this.maxChars = maxChars;
  }

  append(chunk: string): void {
    const pieces = (this.partial + chunk).split(/\r?\n/);
    this.partial = pieces.pop() ?? "";
    this.complete.push(...pieces.filter(isVisible));
    // A process writing one endless line must not grow the buffer either.
    if (this.partial.length > this.maxChars) this.partial = this.partial.slice(-this.maxChars);
    this.trim();
  }

  /** Forgets what was written: a new process of the server starts (its own output is what explains it). */
  clear(): void {
    this.complete.length = 0;
    this.partial = "";
  }

  /** Complete lines plus the unfinished last one, oldest first, blank lines left out. */
  lines(): string[] {
    return isVisible(this.partial) ? [...this.complete, this.partial] : [...this.complete];
  }

  private trim(): void {
    if (this.complete.length > this.maxLines) this.complete.splice(0, this.complete.length - this.maxLines);
    let size = this.partial.length + this.complete.reduce((sum, line) => sum + line.length + 1, 0);
    while (this.complete.length > 0 && size > this.maxChars) size -= this.complete.shift()!.length + 1;
  }
}

function isVisible(line: string): boolean {
  return line.trim() !== "";
}
